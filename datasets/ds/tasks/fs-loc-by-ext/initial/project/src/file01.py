VALUE = 49
    return event.get('id')
VALUE = 55
def handler(event):
    return event.get('id')


import os
import os
def handler(event):
VALUE = 80


    return event.get('id')

def handler(event):
VALUE = 45
def handler(event):
    return event.get('id')
VALUE = 8
    return event.get('id')
import os

    return event.get('id')

    return event.get('id')
import os
import os
    return event.get('id')


    return event.get('id')
def handler(event):
VALUE = 14
VALUE = 40
import os

import os
VALUE = 71
VALUE = 83

VALUE = 19
VALUE = 24

import os
    return event.get('id')

    return event.get('id')
def handler(event):
    return event.get('id')
VALUE = 78
import os
import os
import os

def handler(event):
    return event.get('id')
    return event.get('id')
def handler(event):


import os
VALUE = 98
VALUE = 85
def handler(event):
import os
def handler(event):
