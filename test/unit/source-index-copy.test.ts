import { describe, expect, it } from 'vitest';
import { copyInto, IndexBuilder, type SourceIndex } from '../../queries/evidence/source-index';

type Row = [day: number, model: number, key: string, retrieved: number, cited: number];

/** A binary COPY of (int4, int4, text, int4, int4) rows as Postgres writes it, with a header extension. */
function copyFile(rows: Row[], extension: number): Buffer {
  const header = Buffer.alloc(19 + extension);
  header.write('PGCOPY\n\xff\r\n\0', 0, 'latin1');
  header.writeUInt32BE(extension, 15);
  const parts = [header];
  for (const [d, m, key, retrieved, cited] of rows) {
    const k = Buffer.from(key, 'utf8');
    const r = Buffer.alloc(38 + k.length);
    r.writeInt16BE(5, 0);
    r.writeInt32BE(4, 2);
    r.writeInt32BE(d, 6);
    r.writeInt32BE(4, 10);
    r.writeInt32BE(m, 14);
    r.writeInt32BE(k.length, 18);
    k.copy(r, 22);
    r.writeInt32BE(4, 22 + k.length);
    r.writeInt32BE(retrieved, 26 + k.length);
    r.writeInt32BE(4, 30 + k.length);
    r.writeInt32BE(cited, 34 + k.length);
    parts.push(r);
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

/** The builder of the rows (their count read first, as the load does). */
const builder = (rows: Row[]) => new IndexBuilder(rows.length);

async function* cut(input: Buffer, size: number) {
  for (let at = 0; at < input.length; at += size) yield input.subarray(at, at + size);
}

const keysOf = (x: SourceIndex) => Array.from({ length: x.keyCount }, (_, k) => x.keyBytes.toString('utf8', x.keyStart[k], x.keyStart[k + 1]));

describe('sources: the index read from binary COPY', () => {
  // keys in byte order, some rows sharing a key, one key a prefix of the next, multi-byte and long keys
  const keys = ['', 'a.com', 'a.com/', 'a.com/x', 'a.com/é', 'b.org/'.padEnd(3000, 'p'), 'z.io/日本'].sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  const rows: Row[] = [];
  keys.forEach((key, i) => {
    for (let j = 0; j <= i % 3; j++) rows.push([20_000 + ((i * 7 + j * 3) % 5), j % 2, key, 1 + i + j, i % 2]);
  });

  it('given the rows cut anywhere, when read, then the keys and the blocks by key are those of the rows one by one', async () => {
    const direct = builder(rows);
    for (const [d, m, key, retrieved, cited] of rows) {
      const k = Buffer.from(key, 'utf8');
      direct.add(d, m, k, 0, k.length, retrieved, cited);
    }
    const want = direct.finish('1', ['m0', 'm1']);
    expect(keysOf(want)).toEqual(keys);
    // each block is its key's rows, the blocks by the key's counts over all rows (cited, retrieved, then the key)
    const total = (k: number, col: 3 | 4) => rows.filter((r) => r[2] === keys[k]).reduce((s, r) => s + r[col], 0);
    const order = keys.map((_, k) => k).sort((a, b) => total(b, 4) - total(a, 4) || total(b, 3) - total(a, 3) || a - b);
    expect(Array.from(want.blockKey)).toEqual(order);
    for (let b = 0; b < order.length; b++) {
      const k = want.blockKey[b];
      const held: Row[] = [];
      for (let i = want.blockStart[b]; i < want.blockStart[b + 1]; i++)
        held.push([want.rowDay[i], want.rowModel[i], keys[k], want.rowRetrieved[i], want.rowCited[i]]);
      expect(held).toEqual(rows.filter((r) => r[2] === keys[k]));
      expect([want.blockCited[b], want.blockRetrieved[b]]).toEqual([total(k, 4), total(k, 3)]);
    }
    const input = copyFile(rows, 5);
    for (const size of [1, 2, 3, 7, 23, 64, 4096, input.length]) {
      const b = builder(rows);
      await copyInto(cut(input, size), b);
      const got = b.finish('1', ['m0', 'm1']);
      expect(keysOf(got), `cut ${size}`).toEqual(keys);
      for (const col of ['blockStart', 'blockKey', 'blockCited', 'blockRetrieved', 'rowDay', 'rowModel', 'rowRetrieved', 'rowCited'] as const)
        expect(Array.from(got[col]), `${col} cut ${size}`).toEqual(Array.from(want[col]));
    }
  });

  it('given rows that do not match the count read first, or a stream cut short, when read, then the load fails', async () => {
    const input = copyFile(rows, 0);
    await expect(copyInto(cut(input.subarray(0, input.length - 2), 64), builder(rows))).rejects.toThrow(/no trailer/);
    await expect(copyInto(cut(input, 64), builder(rows.slice(1)))).rejects.toThrow(/more rows than counted/);
    const short = builder([...rows, [20_000, 0, 'zz', 1, 0]]);
    await copyInto(cut(input, 64), short);
    expect(() => short.finish('1', [])).toThrow(/fewer rows/);
  });
});
