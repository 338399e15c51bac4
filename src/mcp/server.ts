import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Knex } from 'knex';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { keyFromHeaders, spendOrganizationBudget } from '../app/auth';
import { acceptAccessToken, type OAuthResource } from '../auth/resource';
import { AccessTokenVerifier } from '../auth/tokens';
import type { AppDeps } from '../app/context';
import { sendError, sendProblem } from '../app/errors';
import { ProblemError, toProblem, tooManyRequests, unauthorized } from '../app/problem';
import type { Principal } from '../domain/principal';
import { listing, runTool, type ToolContext, type ToolDef } from './tool';

export const MCP_PATH = '/api/mcp';
/** CONTRACT "MCP sign-in": the public tools for clients without an account, a whole anonymous session */
export const MCP_PUBLIC_PATH = '/api/mcp/public';
/** spec, "Limits": anonymous tool-server requests */
export const ANON_REQUESTS_PER_MIN = 60;
export const ANON_MAX_BODY_BYTES = 512 * 1024;

const SERVER_INFO = { name: 'aivis', version: '1.0.0' };
const INSTRUCTIONS =
  'aivis: how AI answer engines talk about a brand. Sign in (OAuth), or send an API key as x-api-key or ' +
  'Authorization: Bearer <key>; without either only check_public_ai_access is available.';
const PUBLIC_INSTRUCTIONS =
  'aivis: how AI answer engines talk about a brand. This endpoint needs no account and serves the public tools ' +
  `only; the others are at ${MCP_PATH}, after signing in (OAuth) or with an API key.`;

interface Caller {
  principal: Principal | null;
  clientHash: string;
}

const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * The salt of client-address hashes, shared by every instance (the per-address budgets live in Postgres too) and
 * never sent anywhere: one random value kept in the database.
 */
async function clientSalt(db: Knex): Promise<string> {
  const read = async () => {
    await db.raw('create table if not exists aivis_secrets (name text primary key, value text not null)');
    await db.raw('insert into aivis_secrets (name, value) values (?, ?) on conflict (name) do nothing', [
      'mcp_client_salt',
      randomBytes(32).toString('hex'),
    ]);
    return ((await db('aivis_secrets').where('name', 'mcp_client_salt').first('value')) as { value: string }).value;
  };
  // two instances creating the table at once: one of them loses the race and retries
  return read().catch(read);
}

/**
 * The MCP tool servers on the app: Streamable HTTP, stateless (a fresh server and transport per POST, JSON answers).
 * MCP_PATH: API keys as x-api-key or Bearer, or a signed-in user's access token (`oauth`: docs/api/oauth.md);
 * without credentials only public tools' calls (no handshake needed: stateless), under the anonymous limits, and 401
 * with the sign-in challenge for anything else, `initialize` included. MCP_PUBLIC_PATH: every caller is anonymous
 * (credentials are not read), a whole session of the public tools under the anonymous limits.
 */
export async function registerMcp(app: FastifyInstance, deps: AppDeps, tools: ToolDef[], oauth?: OAuthResource): Promise<void> {
  const names = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw new Error(`MCP tool ${t.name} is defined twice`);
    names.add(t.name);
  }
  const salt = await clientSalt(deps.rt.database.db);
  const hashClient = (address: string) => createHmac('sha256', salt).update(address).digest('hex').slice(0, 32);
  const callers = new WeakMap<FastifyRequest, Caller>();
  const publicTools = new Set(tools.filter((t) => t.public).map((t) => t.name));

  /** RFC 9728's challenge: where the client finds how to sign in (with the error when a credential was refused). */
  const challenge = (error?: 'invalid_token') =>
    oauth ? `Bearer ${error ? `error="${error}", ` : ''}resource_metadata="${oauth.resourceMetadataUrl}"` : 'Bearer realm="aivis"';
  const unauthenticated = (error?: 'invalid_token') => new ProblemError(401, 'Unauthorized', undefined, { 'www-authenticate': challenge(error) });

  /** An API key (x-api-key, or Bearer) or a signed-in user's access token (Bearer); null when neither holds. */
  async function authenticate(headers: FastifyRequest['headers']): Promise<Principal | null> {
    const token = keyFromHeaders(headers, true);
    if (oauth && token && headers['x-api-key'] === undefined && AccessTokenVerifier.looksLikeJwt(token)) {
      return acceptAccessToken(oauth, token);
    }
    return deps.auth.authenticate(token);
  }

  /** Who calls, and whether this request may go on: runs before the body is read. */
  async function admit(req: FastifyRequest, reply: FastifyReply, anonymousOnly: boolean) {
    try {
      const clientHash = hashClient(req.ip);
      const presented = !anonymousOnly && (req.headers['x-api-key'] !== undefined || req.headers.authorization !== undefined);
      let principal: Principal | null = null;
      if (presented) {
        // a key that is there but does not authenticate is refused, never downgraded to anonymous
        principal = await authenticate(req.headers);
        if (!principal) throw unauthenticated('invalid_token');
        // raw headers: the transport writes the answer itself
        await spendOrganizationBudget(deps, principal, (k, v) => reply.raw.setHeader(k, v));
      } else {
        const rate = await deps.limiter.hit(`mcp-anon:${clientHash}`, ANON_REQUESTS_PER_MIN, 60);
        if (!rate.allowed) throw tooManyRequests(rate.retryAfterSeconds);
        const length = Number(req.headers['content-length'] ?? 0);
        if (length > ANON_MAX_BODY_BYTES) throw tooLarge();
      }
      callers.set(req, { principal, clientHash });
    } catch (err) {
      const p = toProblem(err);
      // the error handler logs it and answers 500
      if (p.unexpected) throw err;
      return sendProblem(reply, p);
    }
  }

  for (const publicOnly of [false, true]) {
    const url = publicOnly ? MCP_PUBLIC_PATH : MCP_PATH;
    const served = publicOnly ? tools.filter((t) => t.public) : tools;
    const instructions = publicOnly ? PUBLIC_INSTRUCTIONS : INSTRUCTIONS;
    const onRequest = (req: FastifyRequest, reply: FastifyReply) => admit(req, reply, publicOnly);
    app.route({
      method: 'POST',
      url,
      onRequest,
      handler: async (req, reply) => {
        const caller = callers.get(req);
        if (!caller) return sendError(reply, unauthorized());
        // a chunked body has no Content-Length: measure what arrived (its depth and encoding were checked before parsing)
        if (!caller.principal && req.bodyBytes > ANON_MAX_BODY_BYTES) {
          return sendError(reply, tooLarge());
        }
        if (Array.isArray(req.body)) return reply.code(400).send(jsonRpcError(ErrorCode.InvalidRequest, 'Batch requests are not supported'));
        // without credentials only the public tools' calls: anything else (initialize included) asks the client to sign in
        if (!caller.principal && !publicOnly && !anonymousAllowed(req.body, publicTools)) return sendError(reply, unauthenticated());

        const server = toolServer(served, instructions, { principal: caller.principal, deps, clientHash: caller.clientHash });
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        reply.hijack();
        reply.raw.on('close', () => {
          void transport.close();
          void server.close();
        });
        try {
          await server.connect(transport);
          await transport.handleRequest(req.raw, reply.raw, req.body);
        } catch (err) {
          req.log.error({ err }, 'mcp request failed');
          if (!reply.raw.headersSent) {
            reply.raw
              .writeHead(500, { 'content-type': 'application/json' })
              .end(JSON.stringify(jsonRpcError(ErrorCode.InternalError, 'Internal server error')));
          }
        }
      },
    });

    // stateless: no server-initiated stream to open and no session to end; without credentials at MCP_PATH, the
    // sign-in challenge first, as for every request but a public tool's call
    const notAllowed = async (req: FastifyRequest, reply: FastifyReply) => {
      if (!publicOnly && req.headers['x-api-key'] === undefined && req.headers.authorization === undefined) {
        return sendError(reply, unauthenticated());
      }
      return reply.code(405).header('allow', 'POST').send(jsonRpcError(-32000, 'Method not allowed: this stateless server answers POST only'));
    };
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({ method, url, ...(publicOnly ? { onRequest } : {}), handler: notAllowed });
    }
  }
}

const tooLarge = () => new ProblemError(413, 'body is too large');

/**
 * What a client without credentials may send: a public tool's call, and nothing else (issue 19: 401 with the challenge
 * for every request but the anonymous public tool). The handshake is refused too: assistants start signing in on a 401
 * to `initialize` (several start it nowhere else), and the server is stateless, so a public tool's call needs no
 * handshake before it.
 */
function anonymousAllowed(body: unknown, publicTools: ReadonlySet<string>): boolean {
  if (typeof body !== 'object' || body === null) return true; // the transport answers what is not JSON-RPC
  const m = (body as { method?: unknown }).method;
  if (m !== 'tools/call') return false;
  const name = (body as { params?: { name?: unknown } }).params?.name;
  return typeof name === 'string' && publicTools.has(name);
}

/**
 * The JSON Schema validator of every per-request server, made once: without it each `new Server` builds its own Ajv
 * with every format added (`ajv` and `json-schema-traverse` were about 5% of a `get_credit_usage` call's profile). The server
 * uses it only to check elicitation answers, which this server never asks for, so sharing it holds no state between
 * requests.
 */
const schemaValidator = new AjvJsonSchemaValidator();

/** One MCP server for one request, of the endpoint's tools: the caller sees only those it may call. */
function toolServer(tools: ToolDef[], instructions: string, ctx: ToolContext): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions, jsonSchemaValidator: schemaValidator });
  const visible = tools.filter((t) => t.public || ctx.principal);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: visible.map(listing) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const t = tools.find((x) => x.name === request.params.name);
    if (!t) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    return runTool(t, ctx, request.params.arguments, ctx.deps.rt.logger);
  });
  return server;
}
