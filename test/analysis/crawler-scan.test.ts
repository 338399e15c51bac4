import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { combinedTime, type LogHit, newCombinedScan, parseCombined, scanCombined } from '../../src/analysis/crawler-logs';
import { inRanges, parseRanges, quadInRanges } from '../../src/analysis/crawler-ranges';

/**
 * The import reads combined lines from their bytes (scanCombined) and never makes a string of a line that is not an AI
 * crawler's; parseCombined (over the decoded line) is the reference: the same verdict and the same fields for every
 * line, well formed or broken anywhere.
 */

const scanned = (line: string): LogHit | null => {
  // the line inside a larger buffer, as the import sees it within a chunk
  const b = Buffer.from(`"x" " y\n${line}\n"z" "`);
  const start = 8;
  const end = start + Buffer.byteLength(line);
  const o = newCombinedScan();
  if (!scanCombined(b, start, end, o)) return null;
  return {
    ip: b.toString('utf8', start, o.ipEnd),
    time: combinedTime(b, o.timeAt),
    path: b.toString('utf8', o.pathStart, o.pathEnd),
    status: o.status,
    ua: b.toString('utf8', o.uaStart, o.uaEnd),
  };
};

const GOOD = [
  '20.171.206.10 - - [10/Oct/2026:13:55:36 -0700] "GET /pricing?a=1 HTTP/1.1" 200 2326 "https://x.example/" "Mozilla/5.0 (compatible; GPTBot/1.1)"',
  '2a0d:1234::5 - frank [01/Jan/2026:00:00:00 +0530] "POST /é/ü HTTP/2" 404 - "-" "ClaudeBot ☃"',
  '1.2.3.4 - - [31/Dec/2025:23:59:59 +0000] "HEAD / HTTP/1.0" 599 0 "-" ""',
  'h - - [29/Feb/2024:12:00:00 +0000] "GET /a b" 100 1 "r" "x" "u"',
];

describe('scanCombined against parseCombined', () => {
  it('given well-formed lines, then both read the same fields', () => {
    for (const l of GOOD) {
      expect(parseCombined(l), l).not.toBeNull();
      expect(scanned(l), l).toEqual(parseCombined(l));
    }
  });

  it('given the hand-picked broken lines, then both refuse them', () => {
    const broken = [
      '',
      ' 1.2.3.4 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "-" "a"',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 099 1 "-" "a"',
      '1.2.3.4 - - [10/Foo/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "-" "a"',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 *0700] "GET / HTTP/1.1" 200 1 "-" "a"',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 -0700] "GET x HTTP/1.1" 200 1 "-" "a"',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 -0700] " / HTTP/1.1" 200 1 "-" "a"',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1 "a"',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1" 200 1',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 -0700] "GET / HTTP/1.1"',
      '1.2.3.4 - - [10/Oct/2026:13:55:36 -0700]',
    ];
    for (const l of broken) {
      expect(parseCombined(l), l).toBeNull();
      expect(scanned(l), l).toBeNull();
    }
  });

  it('given lines broken at random (characters replaced, inserted, deleted; multi-byte ones too), then both agree on every one', () => {
    const pieces = fc.constantFrom(' ', '"', '[', ']', '/', ':', '-', '+', '0', '5', '9', 'a', 'Oct', '" ', ' "', 'é', '☃', '😀', 'HTTP/1.1', '\t');
    let read = 0;
    let refused = 0;
    const edit = fc.record({ at: fc.nat(), del: fc.nat({ max: 4 }), ins: fc.array(pieces, { maxLength: 3 }) });
    fc.assert(
      fc.property(fc.constantFrom(...GOOD), fc.array(edit, { minLength: 1, maxLength: 4 }), (base, edits) => {
        let l = base;
        for (const e of edits) {
          const at = e.at % (l.length + 1);
          l = l.slice(0, at) + e.ins.join('') + l.slice(at + e.del);
        }
        // a lone surrogate is no UTF-8 line: the import rejects it before reading
        if (!Buffer.from(l).equals(Buffer.from(Buffer.from(l).toString()))) return;
        if (Buffer.from(l).toString() !== l) return;
        const ref = parseCombined(l);
        expect(scanned(l)).toEqual(ref);
        if (ref) read++;
        else refused++;
      }),
      { numRuns: 20_000, seed: 42 },
    );
    // both verdicts were exercised, not only the refusal
    expect(read).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });
});

describe('inRanges: dotted-quad addresses read without ipaddr.js', () => {
  const prefixes = ['20.171.206.0/24', '66.249.64.0/27', '0.0.0.0/32', '255.255.255.255/32'];
  const r = parseRanges({ prefixes: [...prefixes.map((ipv4Prefix) => ({ ipv4Prefix })), { ipv6Prefix: '2a0d:1234::/32' }] });
  // the reference: ipaddr.js alone
  const reference = (ip: string): boolean | null => {
    if (!ipaddr.isValid(ip)) return null;
    const a = ipaddr.process(ip);
    if (a.kind() === 'ipv6') return (a as ipaddr.IPv6).match(ipaddr.parseCIDR('2a0d:1234::/32') as [ipaddr.IPv6, number]);
    return prefixes.some((p) => (a as ipaddr.IPv4).match(ipaddr.parseCIDR(p) as [ipaddr.IPv4, number]));
  };
  it('gives what ipaddr.js gives for plain, octal-looking, short, out-of-range and mapped addresses', () => {
    const picked = [
      ['20.171.206.0', true],
      ['20.171.206.255', true],
      ['20.171.207.0', false],
      ['66.249.64.31', true],
      ['66.249.64.32', false],
      ['0.0.0.0', true],
      ['255.255.255.255', true],
      ['255.255.255.254', false],
      ['024.171.206.1', null],
      ['20.171.206.256', null],
      ['20.171.206', null],
      ['20.171.206.1.', null],
      ['::ffff:20.171.206.9', true],
      ['2a0d:1234::5', true],
      ['not-an-ip', null],
      ['', null],
    ] as const;
    for (const [ip, inside] of picked) {
      const ref = reference(ip);
      expect(inRanges(r, ip), ip).toBe(ref);
      // where ipaddr.js reads the address its own way, the hand-written value above is only a check of the reference
      if (inside !== null) expect(ref, ip).toBe(inside);
    }
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.nat({ max: 300 }).map(String), fc.constantFrom('0', '00', '07', '0x1f', '20', '171', '206', '')), {
          minLength: 1,
          maxLength: 5,
        }),
        (parts) => {
          const ip = parts.join('.');
          expect(inRanges(r, ip)).toBe(reference(ip));
        },
      ),
      { numRuns: 5_000, seed: 7 },
    );
  });

  it('given the address as bytes inside a line, then quadInRanges reads a plain dotted quad as inRanges does, and nothing else', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.nat({ max: 300 }).map(String), fc.constantFrom('0', '00', '07', '0x1f', '20', '171', '206', '', ':', 'a')), {
          minLength: 1,
          maxLength: 5,
        }),
        (parts) => {
          const ip = parts.join('.');
          const line = Buffer.from(`x${ip} - - [`);
          const got = quadInRanges(r, line, 1, 1 + ip.length);
          // read from bytes only where the text is four plain decimal parts; the rest goes to inRanges
          const plain = /^(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}$/.test(ip) && ip.split('.').every((p) => Number(p) <= 255);
          expect(got).toBe(plain ? inRanges(r, ip) : null);
          // a bot without published ranges: a plain address is outside them
          expect(quadInRanges(undefined, line, 1, 1 + ip.length)).toBe(plain ? false : null);
        },
      ),
      { numRuns: 5_000, seed: 8 },
    );
  });
});
