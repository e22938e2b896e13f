
def handler(event):

    return event.get('id')

import os
def handler(event):
def handler(event):
    return event.get('id')
import os

    return event.get('id')
VALUE = 74

VALUE = 85

import os
def handler(event):

    return event.get('id')
    return event.get('id')

import os
import os
import os
def handler(event):
VALUE = 86

def handler(event):
def handler(event):
VALUE = 22
import os

VALUE = 37
VALUE = 83
    return event.get('id')
def handler(event):
VALUE = 68

def handler(event):
import os

def handler(event):
def handler(event):

    return event.get('id')
def handler(event):
    return event.get('id')
VALUE = 9
    return event.get('id')

    return event.get('id')
VALUE = 60
import os
VALUE = 13



    return event.get('id')
import os
    return event.get('id')
import os
VALUE = 16
    return event.get('id')
def handler(event):

import os

def handler(event):
    return event.get('id')

    return event.get('id')
