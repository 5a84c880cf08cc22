"""The C pointer of a PyGObject wrapper (a GstPad, a GstElement…), for the GObject and GStreamer calls the agent
makes through ctypes where the Python binding has no way in (playout.py, icepace.py)."""
import ctypes

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def pointer_of(obj):
    return _get_pointer(obj.__gpointer__, None)
