import net from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { label } from '../../src/domain/schemas';
import { sendError } from '../../src/app/errors';
import type { ProblemError } from '../../src/app/problem';
import { headerInput } from '../../src/http/route';

/**
 * A header used as data (the Idempotency-Key of the pitch reports, for one), over a real socket: the bytes a client
 * sends, not what a client library would make of them.
 */
const app = Fastify();
let port = 0;
beforeAll(async () => {
  app.get('/echo', async (req, reply) => {
    try {
      return { key: headerInput(req.headers, 'Idempotency-Key', label(255)) };
    } catch (err) {
      return sendError(reply, err as ProblemError);
    }
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  port = (app.server.address() as net.AddressInfo).port;
});
afterAll(() => app.close());

/** One GET with the header's value as raw bytes (or no header); the status line and the body. */
function send(value: Buffer | null): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      const header = value ? Buffer.concat([Buffer.from('Idempotency-Key: '), value, Buffer.from('\r\n')]) : Buffer.alloc(0);
      sock.write(Buffer.concat([Buffer.from('GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'), header, Buffer.from('\r\n')]));
    });
    let out = '';
    sock.setEncoding('utf8');
    sock.on('data', (d) => (out += d));
    sock.on('error', reject);
    sock.on('end', () => {
      const [head, body = ''] = out.split('\r\n\r\n');
      let json: unknown = body;
      try {
        json = JSON.parse(body);
      } catch {
        /* not JSON */
      }
      resolve({ status: Number(head.split(' ')[1]), body: json });
    });
  });
}

describe('headerInput', () => {
  it('given UTF-8 in a header, then the value is read as the client wrote it', async () => {
    expect(await send(Buffer.from('Zürich-42 ✓'))).toEqual({ status: 200, body: { key: 'Zürich-42 ✓' } });
  });

  it('given bytes that are not UTF-8, then 400 naming the header', async () => {
    expect(await send(Buffer.from([0x61, 0xff, 0x62]))).toEqual({ status: 400, body: { error: 'Idempotency-Key: must be valid UTF-8' } });
    expect(await send(Buffer.from([0xed, 0xa0, 0x80]))).toEqual({ status: 400, body: { error: 'Idempotency-Key: must be valid UTF-8' } });
  });

  it("given what the schema refuses, then its message naming the header; a missing header is 'required'", async () => {
    expect(await send(Buffer.from('a\u202eb'))).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^Idempotency-Key: must not contain bidirectional/) },
    });
    expect(await send(Buffer.from('x'.repeat(256)))).toEqual({ status: 400, body: { error: 'Idempotency-Key: must be at most 255 characters' } });
    expect(await send(null)).toEqual({ status: 400, body: { error: 'Idempotency-Key is required' } });
  });

  it('given NUL or another control byte, then the HTTP parser itself answers 400 before any handler', async () => {
    for (const bad of [Buffer.from([0x61, 0x00, 0x62]), Buffer.from([0x61, 0x01, 0x62])]) expect((await send(bad)).status).toBe(400);
  });
});
