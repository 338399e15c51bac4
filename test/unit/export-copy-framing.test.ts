import { describe, expect, it } from 'vitest';
import { copyBinaryText } from '../../queries/evidence/export';

/** A binary COPY stream as Postgres writes it: header (with an extension), one text column per row, trailer. */
function copyFile(rows: Buffer[], extension = 0): Buffer {
  const header = Buffer.alloc(19 + extension);
  header.write('PGCOPY\n\xff\r\n\0', 0, 'latin1');
  header.writeUInt32BE(0, 11);
  header.writeUInt32BE(extension, 15);
  const parts: Buffer[] = [header];
  for (const r of rows) {
    const f = Buffer.alloc(6);
    f.writeInt16BE(1, 0);
    f.writeInt32BE(r.length, 2);
    parts.push(f, r);
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1, 0);
  parts.push(trailer);
  return Buffer.concat(parts);
}

/** The bytes the transform passes on, fed `input` cut at the given sizes (cycled). */
async function run(input: Buffer, cuts: number[]): Promise<{ out: Buffer; batches: number[] }> {
  const t = copyBinaryText();
  const got: Buffer[] = [];
  t.on('data', (b: Buffer) => got.push(Buffer.from(b)));
  const ended = new Promise<void>((resolve, reject) => {
    t.on('end', resolve);
    t.on('error', reject);
  });
  for (let at = 0, i = 0; at < input.length; i++) {
    const n = Math.max(1, cuts[i % cuts.length]);
    t.write(input.subarray(at, at + n));
    at += n;
  }
  t.end();
  await ended;
  return { out: Buffer.concat(got), batches: got.map((b) => b.length) };
}

const line = (i: number, size: number) => Buffer.from(`{"i":${i},"s":"${'é'.repeat(size)}"}\n`);

describe('export: binary COPY framing dropped', () => {
  const rows = Array.from({ length: 300 }, (_, i) => line(i, (i * 37) % 900));
  // a row longer than a batch (128 KB), and an empty one
  rows.splice(150, 0, line(-1, 100_000), Buffer.alloc(0));
  // two statements one after the other, the first with a header extension
  const input = Buffer.concat([copyFile(rows.slice(0, 200), 7), copyFile(rows.slice(200))]);
  const expected = Buffer.concat(rows);

  it('given the stream whole, in one-byte chunks or cut anywhere (headers, lengths and rows straddling chunks), then the rows joined, byte for byte', async () => {
    for (const cuts of [[input.length], [1], [2, 3, 5, 7], [19, 6, 1], [4096], [65_536, 13], [131_072, 131_071]]) {
      const { out } = await run(input, cuts);
      expect(out.length).toBe(expected.length);
      expect(out.equals(expected)).toBe(true);
    }
  });

  it('given more than a batch of rows, then full 128 KB batches and the rest at the end', async () => {
    const { batches } = await run(input, [65_536]);
    expect(batches.length).toBe(Math.ceil(expected.length / 131_072));
    expect(batches.slice(0, -1).every((n) => n === 131_072)).toBe(true);
  });

  it('given a row of two columns, then the stream fails (never passes a column on as a line)', async () => {
    const bad = copyFile([line(1, 3)]);
    bad.writeInt16BE(2, 19);
    await expect(run(bad, [bad.length])).rejects.toThrow(/2 columns/);
  });
});
