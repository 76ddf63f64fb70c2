"""Membership: which contacts are in which audiences, kept stored and kept exact.

- `members.py`: the members of an audience as a condition, the audiences of a page's rows,
  the sizes of audiences;
- `judge.py`: which contacts each smart audience selects, so which pairs enter and leave
  (it decides, writes nothing);
- `store.py`: stored membership and its differences, refreshed by every write
  (`write_effects.py`), with the events of each difference;
- `snapshot.py`: a smart audience's members evaluated in a read transaction, stored by the
  write that follows;
- `due.py`: when time alone moves membership (filters with relative date-times);
- `plan.py`: a list's audiences prepared once per change of them (refresh order, the index of
  columns to the audiences reading them);
- `records.py`: contacts as the library evaluates them in memory.

The scheduler that moves membership with the clock is a use case
(`use_cases/membership_clock.py`): it owns its transactions.
"""
