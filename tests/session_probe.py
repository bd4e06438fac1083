"""A stand-in child for tests: reads its stdin, prints its pid, session and process group as JSON."""

import json
import os
import sys

sys.stdin.read()
print(json.dumps({"pid": os.getpid(), "sid": os.getsid(0), "pgid": os.getpgid(0)}))
