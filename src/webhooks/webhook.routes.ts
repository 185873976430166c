import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Authorize } from '../http/authorize.ts';
import { principalOf } from '../http/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { deleteSchema, documented, NoContent, problemResponses, readSchema } from '../http/schemas.ts';
import type { WebhookService } from './webhook.service.ts';
import {
  DeliveryListQuery,
  DeliveryPage,
  DeliveryParams,
  Endpoint,
  EndpointCreateBody,
  EndpointCreated,
  EndpointListQuery,
  EndpointPage,
  EndpointParams,
  SecretRotated,
} from './webhook.schemas.ts';

const EndpointLocation = {
  Location: Type.String({
    format: 'uri-reference',
    description: 'The endpoint, relative: /webhook-endpoints/{id}',
  }),
};

/** Webhook endpoints and their delivery logs (docs/reference.md §10.1), scope `webhooks:manage`. Thin: parse, call, reply. */
export async function webhookRoutes(
  app: FastifyInstance,
  { webhooks, authorize }: { webhooks: WebhookService; authorize: Authorize },
): Promise<void> {
  const onRequest = authorize(SCOPES.webhooksManage);
  endpointRoutes(app, webhooks, onRequest);
  deliveryRoutes(app, webhooks, onRequest);
}

const tags = ['webhooks'];
/** The hook that lets `webhooks:manage` through, put before every route here. */
type ManageHook = ReturnType<Authorize>;

/** Registering, listing, reading, deleting and testing endpoints. */
function endpointRoutes(app: FastifyInstance, webhooks: WebhookService, onRequest: ManageHook): void {
  app.post<{ Body: Static<typeof EndpointCreateBody> }>(
    '/webhook-endpoints',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Register a webhook endpoint (its secret is shown only in this answer)',
        body: EndpointCreateBody,
        response: {
          201: documented('Endpoint registered', EndpointCreated, EndpointLocation),
          ...problemResponses(400, 401, 403, 409, 415),
        },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(principalOf(request).tenantId, request.body);
      return reply.code(201).header('location', `/webhook-endpoints/${created.id}`).send(created);
    },
  );

  app.get<{ Querystring: Static<typeof EndpointListQuery> }>(
    '/webhook-endpoints',
    {
      onRequest,
      schema: readSchema(
        { querystring: EndpointListQuery },
        {
          tags,
          summary: 'List the tenant’s webhook endpoints, oldest first',
          description: 'A page of endpoints (without secrets)',
          answer: EndpointPage,
        },
      ),
    },
    async (request) => {
      const { limit = 20, cursor } = request.query;
      return webhooks.list(principalOf(request).tenantId, { limit, cursor });
    },
  );

  app.get<{ Params: Static<typeof EndpointParams> }>(
    '/webhook-endpoints/:id',
    {
      onRequest,
      schema: readSchema(
        { params: EndpointParams },
        {
          tags,
          summary: 'Get a webhook endpoint',
          description: 'The endpoint (without its secret)',
          answer: Endpoint,
        },
      ),
    },
    async (request) => webhooks.get(principalOf(request).tenantId, request.params.id),
  );

  app.delete<{ Params: Static<typeof EndpointParams> }>(
    '/webhook-endpoints/:id',
    {
      onRequest,
      schema: deleteSchema(EndpointParams, {
        tags,
        summary: 'Delete a webhook endpoint and its delivery log',
      }),
    },
    async (request, reply) => {
      await webhooks.remove(principalOf(request).tenantId, request.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: Static<typeof EndpointParams> }>(
    '/webhook-endpoints/:id/rotate-secret',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Replace the secret; the previous one keeps signing for 24 h (two signatures)',
        params: EndpointParams,
        response: { 200: documented('The new secret', SecretRotated), ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => webhooks.rotateSecret(principalOf(request).tenantId, request.params.id),
  );
}

/** An endpoint's delivery log, and redelivering one of its deliveries. */
function deliveryRoutes(app: FastifyInstance, webhooks: WebhookService, onRequest: ManageHook): void {
  app.get<{ Params: Static<typeof EndpointParams>; Querystring: Static<typeof DeliveryListQuery> }>(
    '/webhook-endpoints/:id/deliveries',
    {
      onRequest,
      schema: {
        tags,
        summary: 'The endpoint’s deliveries, newest first',
        params: EndpointParams,
        querystring: DeliveryListQuery,
        response: {
          200: documented('A page of deliveries, newest first', DeliveryPage),
          ...problemResponses(400, 401, 403, 404),
        },
      },
      // The id is resolved before the query is judged, as for a batch's errors page.
      attachValidation: true,
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      if (request.validationError) {
        await webhooks.get(tenantId, request.params.id);
        throw request.validationError;
      }
      const { limit = 20, cursor } = request.query;
      return webhooks.listDeliveries(tenantId, request.params.id, { limit, cursor });
    },
  );

  app.post<{ Params: Static<typeof DeliveryParams> }>(
    '/webhook-endpoints/:id/deliveries/:delivery_id/redeliver',
    {
      onRequest,
      schema: {
        tags,
        summary: 'Send a delivery again soon, with the same webhook-id',
        params: DeliveryParams,
        response: {
          202: NoContent('One new attempt will be made soon'),
          ...problemResponses(401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { id, delivery_id: deliveryId } = request.params;
      await webhooks.redeliver(principalOf(request).tenantId, id, deliveryId);
      return reply.code(202).send();
    },
  );
}
