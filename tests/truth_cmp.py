#!/usr/bin/env python3
"""Developer aid: compare `fitgate plan --json` counts with truth.tsv (the cmocka test is the gate)."""
import csv, json, subprocess, sys
rows = list(csv.DictReader(open('tests/fixtures/models/truth.tsv'), delimiter='\t'))
for r in rows:
    d = 'tests/fixtures/models/' + r['hf_id'].replace('/', '--')
    p = subprocess.run(['./build/fitgate', 'plan', d, '--json'], capture_output=True, text=True)
    try:
        got = json.loads(p.stdout)['model']['params']['total']
        got = int(got)
    except Exception:
        got = None
    want = int(r['total_params']) if r['total_params'] else None
    st = 'ERR ' + p.stderr.strip()[:80] if got is None else ('notruth' if want is None else ('OK' if got == want else 'DIFF %+d' % (got - want)))
    print('%-44s %-13s %15s %15s %s' % (r['hf_id'], r['model_type'], want, got, st))
