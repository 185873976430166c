import { Type, type Static } from '@sinclair/typebox';
import { PageQuery, PageSchema } from '../pagination/page.ts';
import { StringEnum } from '../validation/string-enum.ts';
import { DELIVERY_STATUSES, WEBHOOK_EVENTS } from './webhook-events.ts';

/** Longest endpoint URL accepted. */
export const MAX_URL_LENGTH = 2048;

const Timestamp = Type.String({ format: 'date-time' });
const Event = StringEnum(WEBHOOK_EVENTS);
const Events = Type.Array(Event, {
  minItems: 1,
  uniqueItems: true,
  description: 'The events this endpoint receives',
});

/** `POST /webhook-endpoints` (docs/reference.md §10.1); unknown properties are refused. */
export const EndpointCreateBody = Type.Object(
  {
    url: Type.String({
      format: 'uri',
      maxLength: MAX_URL_LENGTH,
      description:
        'Absolute https URL the deliveries are POSTed to (http only with WEBHOOK_ALLOW_PRIVATE_HOSTS=true)',
    }),
    events: Type.Optional({ ...Events, description: 'Default: all three events' }),
    // One schema with both types rather than a union, so a long text is `out_of_range`, not "must be null".
    description: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        maxLength: 500,
        description: 'A note for people',
      }),
    ),
  },
  { additionalProperties: false, title: 'WebhookEndpointCreate' },
);

const endpointProperties = {
  id: Type.String(),
  url: Type.String(),
  events: Events,
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean({ description: 'false once the URL answered 410 Gone' }),
  created_at: Timestamp,
};

/** An endpoint as listed and read: never with its secret. */
export const Endpoint = Type.Object(endpointProperties, {
  additionalProperties: false,
  title: 'WebhookEndpoint',
});
export type EndpointRecord = Static<typeof Endpoint>;

const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]{43}=$',
  description: '`whsec_` + base64 of 32 random bytes; shown only here',
});

/** The 201 answer: the endpoint and, this once, its secret. */
export const EndpointCreated = Type.Object(
  { ...endpointProperties, secret: Secret },
  { additionalProperties: false, title: 'WebhookEndpointCreated' },
);

/** The answer to a rotation: the new secret; the previous one still signs for 24 h. */
export const SecretRotated = Type.Object(
  { secret: Secret },
  { additionalProperties: false, title: 'SecretRotated' },
);

/** One delivery in an endpoint's log (docs/webhooks.md, the delivery log). */
export const Delivery = Type.Object(
  {
    id: Type.String({ description: 'Sent as webhook-id on every attempt' }),
    event: Event,
    batch_id: Type.String(),
    batch_label: Type.Optional(
      Type.String({
        description:
          'The batch’s label (docs/batch-labels.md), only when it has one; absent too once the batch is gone',
      }),
    ),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer({ description: 'Attempts made so far' }),
    last_status_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'HTTP status of the last answer; null when none came',
    }),
    last_error: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the last attempt failed; null when it delivered or none was made',
    }),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'null unless pending' }),
    created_at: Timestamp,
    delivered_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false, title: 'WebhookDelivery' },
);
export type DeliveryRecord = Static<typeof Delivery>;

export const EndpointPage = PageSchema(Endpoint, 'WebhookEndpointPage');
export const DeliveryPage = PageSchema(Delivery, 'WebhookDeliveryPage');
export const EndpointListQuery = PageQuery(100, 20);
export const DeliveryListQuery = PageQuery(100, 20);
export const EndpointParams = Type.Object({ id: Type.String() });
export const DeliveryParams = Type.Object({ id: Type.String(), delivery_id: Type.String() });
