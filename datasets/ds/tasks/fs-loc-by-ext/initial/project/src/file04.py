VALUE = 17
import os
def handler(event):
VALUE = 90
VALUE = 89
import os
VALUE = 9
def handler(event):
VALUE = 19
import os
def handler(event):

def handler(event):
VALUE = 69
    return event.get('id')
VALUE = 52
import os

    return event.get('id')
VALUE = 3
def handler(event):
VALUE = 7

    return event.get('id')


def handler(event):
import os
    return event.get('id')
import os

def handler(event):
    return event.get('id')
import os
    return event.get('id')
    return event.get('id')
import os

VALUE = 97
VALUE = 13
def handler(event):
    return event.get('id')
def handler(event):
import os
import os
VALUE = 52
import os


VALUE = 44
def handler(event):
    return event.get('id')

import os
    return event.get('id')

import os
    return event.get('id')
    return event.get('id')
import os
    return event.get('id')

import os
    return event.get('id')
    return event.get('id')
    return event.get('id')
import os
    return event.get('id')

import os
VALUE = 26
VALUE = 46
import os
    return event.get('id')
VALUE = 90


    return event.get('id')
VALUE = 10
import os
def handler(event):
    return event.get('id')


import os
    return event.get('id')
VALUE = 97
import os
def handler(event):
import os
VALUE = 77
import os
def handler(event):
    return event.get('id')
import os
VALUE = 94
import os
VALUE = 18
VALUE = 20

VALUE = 55
VALUE = 92
VALUE = 53


    return event.get('id')


def handler(event):
import os
def handler(event):
    return event.get('id')
