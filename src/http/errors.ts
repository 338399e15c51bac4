import type { FastifyReply } from 'fastify';
import { type Problem, type ProblemError, toProblem } from '../app/problem';

/** The HTTP name of the error that is its own answer (src/app/problem.ts); every catch site maps with toProblem. */
export { ProblemError as HttpError, badRequest, issueMessage, problemError as fromDomainError, unauthorized } from '../app/problem';

/** Sends a problem: its status, its headers, its `{error}` body. */
export function sendProblem(reply: FastifyReply, p: Problem) {
  if (p.headers) for (const [k, v] of Object.entries(p.headers)) reply.header(k, v);
  return reply.code(p.status).send(p.body);
}

/** Sends the answer of an error that is its own answer (toProblem of a ProblemError). */
export const sendError = (reply: FastifyReply, err: ProblemError) => sendProblem(reply, toProblem(err));
