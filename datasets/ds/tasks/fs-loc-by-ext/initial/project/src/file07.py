

    return event.get('id')
VALUE = 70
    return event.get('id')
import os
def handler(event):
def handler(event):
    return event.get('id')
def handler(event):
VALUE = 80
import os
VALUE = 64
def handler(event):
    return event.get('id')
VALUE = 7
import os
    return event.get('id')
    return event.get('id')
import os
    return event.get('id')
def handler(event):
import os
VALUE = 37
import os
import os

    return event.get('id')
def handler(event):

import os
def handler(event):
    return event.get('id')
VALUE = 37
def handler(event):
VALUE = 1

    return event.get('id')
    return event.get('id')
import os
def handler(event):
import os
def handler(event):
VALUE = 25
VALUE = 11
    return event.get('id')

def handler(event):
VALUE = 50


    return event.get('id')

VALUE = 8
import os
