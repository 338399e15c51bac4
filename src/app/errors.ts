import { type Problem, type ProblemError, toProblem } from './problem';

/** What sending needs of a reply (fastify's). */
interface Reply {
  header(name: string, value: string): unknown;
  code(status: number): { send(body: unknown): unknown };
}

/** Sends a problem: its status, its headers, its `{error}` body. */
export function sendProblem<R extends Reply>(reply: R, p: Problem) {
  if (p.headers) for (const [k, v] of Object.entries(p.headers)) reply.header(k, v);
  return reply.code(p.status).send(p.body);
}

/** Sends the answer of an error that is its own answer (toProblem of a ProblemError). */
export const sendError = <R extends Reply>(reply: R, err: ProblemError) => sendProblem(reply, toProblem(err));
