import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApi } from '../../src/http/openapi';
import { route } from '../../src/http/route';

const ok = async () => ({});

describe('the OpenAPI document', () => {
  it('given a response schema with a default and a transform, then the answer is described as sent (output) and the request as taken (input)', () => {
    const doc = buildOpenApi([
      route({
        method: 'POST',
        url: '/x',
        summary: 's',
        tag: 't',
        body: z.object({ n: z.number().default(1) }),
        responses: {
          200: z.object({
            n: z
              .string()
              .transform((v) => v.length)
              .pipe(z.number()),
            at: z.string().optional(),
          }),
        },
        handler: ok,
      }),
    ]) as any;
    const op = doc.paths['/x'].post;
    expect(op.requestBody.content['application/json'].schema.required ?? []).not.toContain('n');
    expect(op.responses['200'].content['application/json'].schema.properties.n).toMatchObject({ type: 'number' });
  });

  it('given a schema it cannot convert, then building the document fails naming the route and the place', () => {
    const bad = route({ method: 'GET', url: '/y', summary: 's', tag: 't', responses: { 200: z.object({ when: z.date() }) }, handler: ok });
    expect(() => buildOpenApi([bad])).toThrow(/GET \/y response 200/);
  });
});
