"""The kinds of value the families' variables take, as ``-S`` writes them.

ReFrame converts an ``-S`` string with the variable's type: ``int('abc')`` raises a ValueError,
``typ.Float('2.0')`` a TypeError ("Float() takes no arguments"), and either ends the whole
session with a traceback; ``bool('false')`` is True. These kinds read the documented forms and
keep anything else as :class:`Unreadable` text, which the variable's rule
(:mod:`fabric_variables`) then refuses with one line when the test is made:

==========  =============================================================  ====================
kind        ``-S`` forms read                                              Python values
==========  =============================================================  ====================
``Count``   a whole number: ``8``, ``+8``, ``1_000_000``                    ``int``
``Real``    a number: ``2``, ``2.0``, ``1e-6``, ``inf``/``nan`` (the rules  ``float``, ``int``
            refuse them)
``Flag``    ``true``/``false``, ``yes``/``no``, ``y``/``n``, ``on``/``off``,  ``bool``
            ``1``/``0`` (any case)
==========  =============================================================  ====================

Text variables stay ``str`` (any ``-S`` string is one) with a rule naming the values they
take. A nullable variable adds ``type(None)``: unset, it takes the partition's value.
"""

from __future__ import annotations

import reframe.utility.typecheck as typ


class Unreadable(str):
    """An ``-S`` value that is not of its variable's kind, kept as written for its rule."""


class Count(metaclass=typ.ConvertibleType):
    """A whole number (``int``)."""

    @classmethod
    def __rfm_cast_str__(cls, text):
        try:
            return int(text.strip())
        except ValueError:
            return Unreadable(text)


class Real(metaclass=typ.ConvertibleType):
    """A number (``float``, or ``int`` as Python writes a whole one)."""

    @classmethod
    def __rfm_cast_str__(cls, text):
        try:
            return float(text.strip())
        except ValueError:
            return Unreadable(text)


FLAG_WORDS = {"true": True, "yes": True, "y": True, "on": True, "1": True,
              "false": False, "no": False, "n": False, "off": False, "0": False}


class Flag(metaclass=typ.ConvertibleType):
    """A boolean (``bool``), from the words of :data:`FLAG_WORDS`."""

    @classmethod
    def __rfm_cast_str__(cls, text):
        value = FLAG_WORDS.get(text.strip().lower())
        return Unreadable(text) if value is None else value


for _kind, _values in ((Count, (int,)), (Real, (float, int)), (Flag, (bool,))):
    for _value in (*_values, Unreadable):
        _kind.register(_value)
