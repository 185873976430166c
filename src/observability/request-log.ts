import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Requests of this route come every few seconds from machines (probes, scrapes): logged at `debug`. */
    routineRequests?: boolean;
  }
}

/**
 * The header a client sets on requests it repeats on a timer, such as the dashboard's polling
 * (ui/src/poller.ts): they are logged at `debug`, so the `info` log shows what people did.
 */
const POLL_HEADER = 'x-poll';

/** Whether a request is one of those repeated on a timer, which `info` leaves out. */
function isRoutine(request: FastifyRequest): boolean {
  return request.routeOptions.config?.routineRequests === true || request.headers[POLL_HEADER] === '1';
}

/**
 * Fastify's request logging with one line per request, once it is answered (not also when it
 * arrives): method, URL, status and time, at `info`, or at `debug` for probes, scrapes and polling.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else if (isRoutine(request)) reply.log.debug(line, 'request completed');
    else reply.log.info(line, 'request completed');
  }
}
