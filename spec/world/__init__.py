"""The world the checks control: :mod:`.clock` (a clock that moves only when told, meeting points)
and :mod:`.filesystem` (a fake filesystem that fails, and crashes, on demand)."""
