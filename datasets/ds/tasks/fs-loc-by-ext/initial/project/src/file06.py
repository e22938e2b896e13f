    return event.get('id')
import os
    return event.get('id')
VALUE = 81

import os

import os
VALUE = 83
    return event.get('id')

VALUE = 46
import os
VALUE = 99
    return event.get('id')
VALUE = 37
import os
import os
    return event.get('id')
VALUE = 22
VALUE = 35
import os
import os
    return event.get('id')
def handler(event):
import os
VALUE = 88

    return event.get('id')
VALUE = 43
import os
VALUE = 15
import os
def handler(event):

def handler(event):
import os
import os
def handler(event):
VALUE = 53
VALUE = 23
    return event.get('id')
import os
def handler(event):
VALUE = 12
def handler(event):

import os



import os
import os
VALUE = 95


    return event.get('id')
import os
def handler(event):
def handler(event):
import os
import os
    return event.get('id')

def handler(event):

VALUE = 24
VALUE = 52
import os
VALUE = 81
    return event.get('id')
import os
import os
def handler(event):
    return event.get('id')
    return event.get('id')

