"""The floors of this package's requirements, as pins: `name==floor` for each `name>=floor` in settings.ini's
`requirements` (torch and torchvision come from the machine's local wheels), plus what those versions need that newer
ones do not (pandas 2.0: pytz). CI installs them into a folder laid over its environment and runs the commands and a
tier of the tests there, so every floor settings.ini declares is one that ran."""
import configparser, re, sys
from pathlib import Path

LOCAL = {'torch', 'torchvision'}  # the local wheels: their floor (2.11) ran on a GPU machine, not here
EXTRA = ['pytz']                  # needed by pandas 2.0, no longer by pandas 3

def floors(settings:Path)->list:
    c = configparser.ConfigParser(); c.read(settings)
    out = []
    for req in c['DEFAULT']['requirements'].split():
        m = re.match(r'([A-Za-z0-9_.-]+).*?>=\s*([0-9][0-9A-Za-z.]*)', req)
        if m and m.group(1).lower() not in LOCAL: out.append(f"{m.group(1)}=={m.group(2)}")
    return out + EXTRA

if __name__ == '__main__':
    print('\n'.join(floors(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1] / 'settings.ini'))))
