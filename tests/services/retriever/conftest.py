import sys
from pathlib import Path

# Lets the test modules import the report builders next to them.
sys.path.insert(0, str(Path(__file__).parent))
