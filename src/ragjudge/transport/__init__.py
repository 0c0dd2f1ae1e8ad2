"""HTTP plumbing shared by every outbound call: whole-attempt deadlines, a stop switch, sessions that honour both.

Also what every caller reads the same way: a URL's safe views and origin (`urls`) and a `Retry-After`
header (`retry_after`); both need only the standard library.
"""
