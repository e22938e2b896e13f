    return event.get('id')
def handler(event):

VALUE = 21
VALUE = 65
VALUE = 98
    return event.get('id')
    return event.get('id')
VALUE = 12
VALUE = 5
VALUE = 4
VALUE = 92
    return event.get('id')
def handler(event):
VALUE = 41
VALUE = 94
    return event.get('id')
import os
def handler(event):
def handler(event):



    return event.get('id')
    return event.get('id')
import os
    return event.get('id')
def handler(event):
import os
VALUE = 71
VALUE = 50

    return event.get('id')

VALUE = 45
    return event.get('id')

VALUE = 5
    return event.get('id')
VALUE = 47

VALUE = 93

VALUE = 92
import os

import os
def handler(event):

def handler(event):
import os

