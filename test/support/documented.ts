import { isDeepStrictEqual } from 'node:util';
import type { z } from 'zod';
import { allRoutes } from '../../src/http/app';
import type { RouteDef } from '../../src/http/route';

interface Matcher {
  def: RouteDef<any, any, any>;
  re: RegExp;
  params: number;
}

// static segments win over parameters (/websites/provision before /websites/:website_id)
const matchers: Matcher[] = allRoutes
  .map((def) => {
    const params = def.url.split('/').filter((seg) => seg.startsWith(':')).length;
    const pattern = def.url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return { def, re: new RegExp(`^${pattern}$`), params };
  })
  .sort((a, b) => a.params - b.params);

/**
 * Every 2xx answer of a mounted route must be what its route documents: its response schema for that status parses
 * the body, and parsing drops nothing (a field sent but not documented fails as much as one documented but missing).
 * Paths outside the mounted routes (health, the tool server, pages) are not checked here.
 */
export function checkDocumentedShape(method: string, pathname: string, status: number, body: unknown): void {
  if (status < 200 || status >= 300) return;
  const m = matchers.find((x) => x.def.method === method.toUpperCase() && x.re.test(pathname));
  if (!m) return;
  const where = `${method.toUpperCase()} ${m.def.url} ${status}`;
  const schema: z.ZodType | undefined = m.def.responses?.[status];
  if (!schema) throw new Error(`${where}: answered 2xx but the route documents no response schema for ${status}`);
  const r = schema.safeParse(body);
  if (!r.success) throw new Error(`${where}: the body does not match the documented response: ${JSON.stringify(r.error.issues.slice(0, 3))}`);
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(r.data)), body)) {
    throw new Error(`${where}: the body carries fields its documented response does not describe: ${JSON.stringify(body).slice(0, 500)}`);
  }
}
