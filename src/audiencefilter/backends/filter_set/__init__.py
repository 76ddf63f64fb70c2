"""Many filters judged together (`FilterSet`): each distinct condition and each distinct
piece of logic computed once, and a tracked record judged again only where a change reaches."""
