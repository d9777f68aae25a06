"""Simple Office: read, edit and create Word, Excel and PowerPoint files, read and create
PDF files, in the chat's project folder.

Each function is ``fn(args, ctx)`` as the Loca format defines; the work is done in
``officedocs`` (one module per format), with python-docx, openpyxl, python-pptx, pypdf
and fpdf2, installed from ``requirements.txt`` as this add-on's own dependencies.
"""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from officedocs import excel, files, pdf, slides, word  # noqa: E402  (after the path above)


def read_word(args, ctx):
    return word.read(args, ctx)


def edit_word(args, ctx):
    return word.edit(args, ctx)


def create_word(args, ctx):
    return word.create(args, ctx)


def read_excel(args, ctx):
    return excel.read(args, ctx)


def edit_excel(args, ctx):
    return excel.edit(args, ctx)


def create_excel(args, ctx):
    return excel.create(args, ctx)


def read_powerpoint(args, ctx):
    return slides.read(args, ctx)


def edit_powerpoint(args, ctx):
    return slides.edit(args, ctx)


def create_powerpoint(args, ctx):
    return slides.create(args, ctx)


def read_pdf(args, ctx):
    return pdf.read(args, ctx)


def create_pdf(args, ctx):
    return pdf.create(args, ctx)


def restore_document(args, ctx):
    """Undo a saved change (the person's alone; the manifest marks it so)."""
    return files.restore(ctx, args, word.SUFFIXES + excel.SUFFIXES + slides.SUFFIXES + pdf.SUFFIXES)
