"""The service's ground floor: settings aside (`settings.py`), the clock, API key formats, the
types of contact fields, JSON writing and the errors answered on purpose. It imports nothing
of the service's other floors (`db`, `domain`, `http`, `api`, `app`), which all stand on it.
"""
