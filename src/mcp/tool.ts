import { z } from 'zod';
import type { CallToolResult, Tool as ToolListing } from '@modelcontextprotocol/sdk/types.js';
import type { AppDeps, Caller } from '../app/context';
import { issueMessage, toProblem, unauthorized } from '../app/problem';
import type { Principal } from '../domain/principal';
import { idOf, WebsiteId } from '../domain/schemas';

type InputSchema = z.ZodObject<z.ZodRawShape>;

/** What a tool call knows about its caller. */
export interface ToolContext<P extends Principal | null = Principal | null> {
  /** null for an anonymous caller (public tools only) */
  principal: P;
  deps: AppDeps;
  /** HMAC of the client address: the key of per-address budgets */
  clientHash: string;
}

interface ToolBase<S extends InputSchema> {
  /** snake_case, as the spec names tools */
  name: string;
  description: string;
  /** the same zod schema REST uses wherever one exists; every property carries a `.describe()` */
  input: S;
  /** what the tool answers: the read model's view schema (the REST route's response schema) */
  output?: z.ZodType<object>;
  /** a short human-readable name, shown by clients instead of `name` */
  title: string;
  /** MCP hints for assistants, stated on every tool (the protocol's defaults assume the worst) */
  annotations: ToolHints;
}

/**
 * A read changes nothing. A write says whether it may destroy or overwrite what is there (deletes, replacements)
 * and whether repeating the same call changes nothing more. openWorldHint: whether it reaches outside aivis's own
 * data (crawls a domain, asks the answer engines); listed as false when not stated.
 */
export type ToolHints =
  | { readOnlyHint: true; openWorldHint?: boolean }
  | { readOnlyHint: false; destructiveHint: boolean; idempotentHint: boolean; openWorldHint?: boolean };

/** The hints most tools state: a read; a write that adds (a create); a write that replaces in place (an update, a delete). */
export const READS = { readOnlyHint: true, openWorldHint: false } as const satisfies ToolHints;
export const ADDS = { readOnlyHint: false, destructiveHint: false, idempotentHint: false } as const satisfies ToolHints;
export const REPLACES = { readOnlyHint: false, destructiveHint: true, idempotentHint: true } as const satisfies ToolHints;

export interface PublicToolDef<S extends InputSchema> extends ToolBase<S> {
  /** callable and listed without an account */
  public: true;
  handler(ctx: ToolContext, input: z.output<S>): Promise<object>;
}

export interface PrivateToolDef<S extends InputSchema> extends ToolBase<S> {
  public?: false;
  handler(ctx: ToolContext<Principal>, input: z.output<S>): Promise<object>;
}

export interface ToolDef extends ToolBase<InputSchema> {
  public: boolean;
  handler(ctx: ToolContext, input: unknown): Promise<object>;
}

/** Defines one MCP tool; the handler calls the same queries/commands a REST route calls. */
export function tool<S extends InputSchema>(def: PublicToolDef<S>): ToolDef;
export function tool<S extends InputSchema>(def: PrivateToolDef<S>): ToolDef;
export function tool(def: PublicToolDef<InputSchema> | PrivateToolDef<InputSchema>): ToolDef {
  return { ...def, public: def.public === true } as ToolDef;
}

/** The input of a tool that reads one website's data: the website's id, nothing else. */
export const OfWebsite = z.strictObject({ website_id: WebsiteId });

/** A tool that reads one website's data (input: its id alone) through the operation REST's `?website_id=` read calls. */
export function websiteRead(
  def: Omit<ToolBase<typeof OfWebsite>, 'input' | 'annotations'> & { read(caller: Caller, websiteId: string): Promise<object> },
) {
  const { read, ...rest } = def;
  return tool({ ...rest, input: OfWebsite, annotations: READS, handler: (ctx, input) => read(ctx, input.website_id) });
}

/** A tool that adds one of a website's items (its input names the website) through the operation REST's POST calls. */
export function websiteCreate<S extends InputSchema>(
  def: Omit<ToolBase<S>, 'annotations'> & { create(caller: Caller, input: z.output<S>): Promise<object> },
) {
  const { create, ...rest } = def;
  return tool<S>({ ...rest, annotations: ADDS, handler: (ctx, input) => create(ctx, input) });
}

/**
 * A tool that acts on one item named by its id, as REST's `/:<id>` routes do: the id (`id`, the item described as
 * `of`) is an input property beside the body's fields, and the operation gets it apart from them.
 */
export function byId<S extends InputSchema, K extends string>(
  def: Omit<ToolBase<S>, 'input'> & {
    id: K;
    of: string;
    body: S;
    call(caller: Caller, id: string, input: z.output<S>): Promise<object>;
  },
): ToolDef {
  const { id, of, body, call, ...rest } = def;
  const input = body.safeExtend({ [id]: idOf(of) } as Record<K, ReturnType<typeof idOf>>);
  return tool({
    ...rest,
    input,
    handler: (ctx, all) => {
      const { [id]: value, ...fields } = all as Record<string, unknown>;
      return call(ctx, value as string, fields as z.output<S>);
    },
  });
}

/** What a failed call's structured content holds: REST's message and status, and REST's extra fields. */
const ToolError = z.looseObject({ error: z.string(), status: z.number().int() });

/** each tool's tools/list entry, made once: its two JSON Schema conversions cost 0.5-1 ms of CPU a tool, every listing */
const listings = new WeakMap<ToolDef, Readonly<ToolListing>>();

/** The tools/list entry: JSON Schema of what the tool accepts (the same frozen object for every request). */
export function listing(t: ToolDef): Readonly<ToolListing> {
  let listed = listings.get(t);
  if (!listed) {
    listed = Object.freeze(listingOf(t));
    listings.set(t, listed);
  }
  return listed;
}

function listingOf(t: ToolDef): ToolListing {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const listed: ToolListing = {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: { ...schema, type: 'object' } as ToolListing['inputSchema'],
  };
  if (t.output) {
    // a tool error carries structured content too ({error, status, ...}): clients validate it against this schema
    const { $schema: _o, ...out } = z.toJSONSchema(z.union([t.output, ToolError]), { io: 'output', unrepresentable: 'throw' }) as Record<
      string,
      unknown
    >;
    listed.outputSchema = { type: 'object', ...out } as ToolListing['outputSchema'];
  }
  listed.annotations = { title: t.title, ...t.annotations, openWorldHint: t.annotations.openWorldHint ?? false };
  return listed;
}

const failure = (message: string, status: number, extra: Record<string, unknown> = {}): CallToolResult => ({
  content: [{ type: 'text', text: message }],
  structuredContent: { error: message, status, ...extra },
  isError: true,
});

/**
 * Runs a tool: authorization, validation (REST's messages), handler. A failure becomes a tool error through the same
 * toProblem as REST (src/app/problem.ts): its text is the message REST gives, with the status; anything unexpected is
 * logged and reported as an internal error.
 */
export async function runTool(t: ToolDef, ctx: ToolContext, args: unknown, log: AppDeps['rt']['logger']): Promise<CallToolResult> {
  try {
    if (!t.public && !ctx.principal) throw unauthorized();
    const input = args ?? {};
    const r = t.input.safeParse(input);
    if (!r.success) return failure(issueMessage(r.error.issues[0], input), 400);
    const out = await t.handler(ctx, r.data);
    return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out as Record<string, unknown> };
  } catch (err) {
    const p = toProblem(err);
    if (p.unexpected) log.error({ err, tool: t.name }, 'tool failed');
    const { error, ...extra } = p.body;
    const retry = p.headers?.['retry-after'];
    return failure(error, p.status, { ...extra, ...(retry ? { retry_after: Number(retry) } : {}) });
  }
}
