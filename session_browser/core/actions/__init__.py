"""The rules of the explicit actions (export, import, rescue), shared by the CLI and the app.

Both front ends call these functions and only present what they return: where an export
may be written and the writing itself (:mod:`.export`), the dry run and change list of an
import (:mod:`.import_`), and which store a quarantined file belongs to (:mod:`.rescue`).
"""
