"""The Python corpus programs' side of the roles contract (README.md).

publish({"name": id, ...}, part=None) writes the roles as one JSON object to
$HB_CORPUS_ROLES (or $HB_CORPUS_ROLES.<part>), through a temporary file and a
rename so that the driver never reads half a file.
"""

import json
import os


def publish(roles, part=None):
    base = os.environ.get("HB_CORPUS_ROLES")
    if not base:
        return
    path = base if part is None else "%s.%s" % (base, part)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(roles, f)
        f.write("\n")
    os.rename(tmp, path)
