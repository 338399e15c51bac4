import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a test receiver got. */
export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  json: any;
  at: number;
}

/**
 * A local webhook receiver: every request is recorded; `answer` decides the reply per path (default 200). Paths let
 * one receiver stand for many endpoints.
 */
export interface Receiver {
  url: string;
  received: Received[];
  /** requests of one path */
  on(path: string): Received[];
  answer: (path: string, req: Received, res: ServerResponse) => void | Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const open = new Set<ServerResponse>();
  const r: Receiver = {
    url: '',
    received,
    on: (path) => received.filter((x) => x.path === path),
    answer: (_p, _q, res) => {
      res.statusCode = 200;
      res.end('ok');
    },
    async close() {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    open.add(res);
    res.on('close', () => open.delete(res));
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {}
      const rec: Received = { path: req.url ?? '/', headers: req.headers as Record<string, string>, body, json, at: Date.now() };
      received.push(rec);
      Promise.resolve(r.answer(rec.path, rec, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}
