import { z } from 'zod';
import type { RouteDef } from './route';

/**
 * A zod schema as JSON Schema: what a request takes (`input`: before defaults and transforms) or what an answer holds
 * (`output`). A schema that cannot be converted stops the document with the route and the place named, rather than
 * being described as anything.
 */
function toSchema(s: z.ZodType, io: 'input' | 'output', where: string) {
  try {
    return z.toJSONSchema(s, { io, unrepresentable: 'throw' });
  } catch (err) {
    throw new Error(`OpenAPI: ${where} cannot be described as JSON Schema: ${(err as Error).message}`);
  }
}

/** The OpenAPI 3.1 document, generated from the same zod schemas the routes validate with. */
export function buildOpenApi(defs: readonly RouteDef<any, any, any>[], extra: { paths?: Record<string, unknown> } = {}) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const d of defs) {
    const path = d.url.replace(/:([a-z_]+)/g, '{$1}');
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ['path', d.params],
      ['query', d.query],
    ] as const) {
      if (!schema) continue;
      const js = toSchema(schema, 'input', `${d.method} ${d.url} ${where}`) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, s] of Object.entries(js.properties ?? {}) as [string, { description?: string }][]) {
        // the field's .describe() is the parameter's description, where documentation tools look for it
        const described = s.description ? { description: s.description } : {};
        parameters.push({ name, in: where, required: where === 'path' || (js.required ?? []).includes(name), ...described, schema: s });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, schema] of Object.entries(d.responses ?? {})) {
      responses[status] = {
        description: 'OK',
        content: { 'application/json': { schema: toSchema(schema, 'output', `${d.method} ${d.url} response ${status}`) } },
      };
    }
    if (!responses[String(d.status ?? 200)]) responses[String(d.status ?? 200)] = { description: 'OK' };
    for (const [status, description] of [
      [400, 'Invalid parameters'],
      [401, 'Unauthorized'],
      [403, 'Forbidden'],
      [404, 'Not found'],
      [429, 'Rate limited; carries Retry-After'],
    ] as const) {
      responses[status] ??= { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    (paths[path] ??= {})[d.method.toLowerCase()] = {
      summary: d.summary,
      tags: d.extension ? [d.tag, 'extension'] : [d.tag],
      ...(d.public ? { security: [] } : {}),
      parameters,
      ...(d.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: toSchema(d.body, 'input', `${d.method} ${d.url} body`) } } } }
        : d.streamedBody
          ? {
              requestBody: {
                required: true,
                description: d.streamedBody.description,
                content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
              },
            }
          : {}),
      responses,
    };
  }
  Object.assign(paths, extra.paths ?? {});
  return {
    openapi: '3.1.0',
    info: { title: 'aivis API', version: '1.0.0', description: 'How AI answer engines talk about a brand and its competitors.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
      schemas: { Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] } },
    },
    security: [{ apiKey: [] }],
    tags: [{ name: 'extension', description: 'Not in the interface specification: aivis extensions (CONTRACT.md)' }],
    paths,
  };
}
