"""A griffe extension for the API reference: the docstrings' Sphinx roles shown as code.

The docstrings cross-reference with Sphinx roles (``:class:`~solitaire_env.envs.base.SolitaireEnv```),
which Markdown would print with the role's name in front. This writes each one as inline code, the
last part of the name for a ``~`` reference as Sphinx does, before mkdocstrings renders the page.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|mod|func|meth|attr|data|obj|exc|const):`(~?)([^`]+)`")


def _code(match: re.Match[str]) -> str:
    name = match.group(2)
    return f"`{name.rsplit('.', 1)[-1] if match.group(1) else name}`"


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_code, obj.docstring.value)
