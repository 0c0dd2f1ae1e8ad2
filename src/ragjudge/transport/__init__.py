"""HTTP plumbing shared by every outbound call: whole-attempt deadlines, a stop switch, sessions that honour both."""
