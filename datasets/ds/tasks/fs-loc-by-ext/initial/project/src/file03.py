import os
def handler(event):

    return event.get('id')
    return event.get('id')
import os
import os
    return event.get('id')
import os
def handler(event):
    return event.get('id')


    return event.get('id')
VALUE = 44
import os
    return event.get('id')
import os
def handler(event):
VALUE = 25
    return event.get('id')
import os
def handler(event):

import os
def handler(event):
def handler(event):

    return event.get('id')
import os
def handler(event):

import os
    return event.get('id')
import os
def handler(event):

import os
    return event.get('id')
