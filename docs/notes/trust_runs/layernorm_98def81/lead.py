"""Ours against the fastest peer at the points of 64 MiB and more, with the medians' 95% intervals."""
import json, sys
for path in sys.argv[1:]:
    a = json.load(open(path))
    g = a['env']['gpu']; print(path, g['name'], g['uuid'][:12], a['run']['git_commit'])
    rows = {}
    for r in a['results']:
        if r['status'] != 'ok': continue
        p = r['params']; k = (p['shape'], p['dtype'], p['mode'])
        rows.setdefault(k, {})[r['implementation']] = r
    big = lead = 0; trail = []
    for k, d in rows.items():
        if 'opbench' not in d: continue
        o = d['opbench']; rws, cols = o['params']['rows'], o['params']['cols']
        esz = 4 if k[1] == 'f32' else 2
        if 2 * rws * cols * esz < 64 * 2**20: continue
        big += 1
        peers = {i: d[i] for i in ('torch', 'torch-compile', 'triton') if i in d}
        bi = min(peers, key=lambda i: peers[i]['stats']['time_us']['p50'])
        bp = peers[bi]['stats']['time_us']; op = o['stats']['time_us']
        if op['p50'] <= bp['p50']:
            lead += 1
        else:
            sep = bp['median_ci95'][1] < op['median_ci95'][0]
            trail.append((k, bi, op['p50'] / bp['p50'] - 1, sep, o['timing']['sampling'].get('throttled_samples')))
    print(f'  {big} points >= 64 MiB: ours leads at {lead}, trails at {len(trail)}')
    for t in sorted(trail):
        print(f'    {t[0]} behind {t[1]} by {t[2]*100:.2f}%  intervals separate: {t[3]}  throttled samples: {t[4]}')
