VALUE = 17
import os
    return event.get('id')
import os
    return event.get('id')
VALUE = 19
VALUE = 76
    return event.get('id')
import os
def handler(event):

def handler(event):
VALUE = 88

import os
import os
import os
    return event.get('id')


VALUE = 50
    return event.get('id')
    return event.get('id')
    return event.get('id')
    return event.get('id')
def handler(event):
def handler(event):

VALUE = 26
VALUE = 59


import os
def handler(event):
import os

import os
def handler(event):
import os

    return event.get('id')
import os
    return event.get('id')
VALUE = 5
VALUE = 99
    return event.get('id')
def handler(event):

VALUE = 73
def handler(event):
import os
def handler(event):
VALUE = 82
VALUE = 6
def handler(event):
    return event.get('id')

    return event.get('id')
    return event.get('id')
import os
import os
VALUE = 46
def handler(event):
    return event.get('id')
import os
import os
def handler(event):
VALUE = 89
VALUE = 39
    return event.get('id')

def handler(event):
VALUE = 72
def handler(event):
