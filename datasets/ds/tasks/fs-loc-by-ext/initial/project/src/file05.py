
def handler(event):

VALUE = 43
def handler(event):
import os

VALUE = 90
def handler(event):

def handler(event):
VALUE = 49
VALUE = 32
def handler(event):
    return event.get('id')
def handler(event):
def handler(event):
import os
import os

    return event.get('id')
    return event.get('id')
    return event.get('id')
    return event.get('id')
import os
def handler(event):
def handler(event):
    return event.get('id')
VALUE = 69
VALUE = 58
import os
VALUE = 15

import os
VALUE = 21

VALUE = 40
VALUE = 29
import os

import os
    return event.get('id')
def handler(event):
import os
import os
import os
VALUE = 52
    return event.get('id')
    return event.get('id')
VALUE = 62
def handler(event):
VALUE = 70

    return event.get('id')
    return event.get('id')
import os
