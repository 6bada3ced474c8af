import rateLimit from '@fastify/rate-limit';
import {
  approveDeviceAuthorization,
  type Clock,
  type DeviceAuthorizationLookup,
  denyDeviceAuthorization,
  findDeviceAuthorization,
  findDeviceAuthorizationByUserCode,
  formatUserCode,
  normalizeUserCode,
  type ProtocolStores,
  type RandomSource,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../audit.js';
import type { AppDatabase } from '../db/client.js';
import { ENDPOINTS } from '../endpoints.js';
import { databaseRateLimitStore } from '../http/database-rate-limit-store.js';
import type { MessageKey } from '../i18n/catalogues/en.js';
import { pageLanguageOf } from '../i18n/request-language.js';
import { ENGLISH } from '../i18n/translator.js';
import { type AuthorizationFlow, levelOf } from '../interaction/authorization-flow.js';
import { csrfTokenFor, isValidCsrfToken } from '../interaction/csrf.js';
import { renderDeviceCodePage, renderDeviceOutcomePage } from '../pages/device.js';
import { sendHtml } from '../pages/respond.js';
import type { PageContext } from './authorization-reply.js';
import { sendErrorPage, sendFormExpiredPage } from './authorization-reply.js';
import type { DevicePurposeResolver, InteractionPage, InteractionPurpose } from './interaction/index.js';

/**
 * The RFC 8628 §3.3 verification page and the device ending of login/consent interactions.
 *
 * GET /device shows the form (`?user_code=` pre-fills it, for `verification_uri_complete`); POST
 * /device checks the code (rate limited per client IP) and starts an interaction that carries the
 * device code's hash, then the usual login (or the SSO session) and a consent page naming the
 * client and the scopes. Consent is always asked, even for `skip_consent` clients and remembered
 * consent: the user must confirm that the device asking is theirs (RFC 8628 §5.4 remote phishing).
 */
export interface DeviceVerificationOptions {
  flow: AuthorizationFlow;
  stores: ProtocolStores;
  clock: Clock;
  random: RandomSource;
  pageContext: PageContext;
  /** Holds the rate-limit counters shared by every instance. */
  db: AppDatabase;
  /** User-code entries allowed per minute and client IP. */
  attemptsPerMinute: number;
}

/** CSRF tokens of the code form are bound to the browser cookie; this names the form. */
const CODE_FORM_ID = 'user-code';
const RATE_LIMIT_WINDOW_MS = 60_000;

export const DEVICE_CONSENT_NOTICE = ENGLISH.text('device.consentNotice');

/** Why a code cannot be used, in words a person can act on. */
const CODE_PROBLEMS: Record<Exclude<DeviceAuthorizationLookup['status'], 'pending'>, MessageKey> = {
  invalid: 'device.codeInvalid',
  expired: 'device.codeExpired',
  used: 'device.codeUsed',
};

/** The user's account cannot grant any requested scope; the device is told `access_denied`. */
function sendNothingGrantable(reply: FastifyReply, pageContext: PageContext) {
  return sendErrorPage(
    reply,
    403,
    {
      title: reply.request.language.text('device.nothingGrantable.title'),
      message: reply.request.language.text('device.nothingGrantable.message'),
      code: 'access_denied',
    },
    pageContext,
  );
}

/** The device ending of an interaction: approve or deny the device code, then a result page. */
export function createDevicePurposeResolver(options: DeviceVerificationOptions): DevicePurposeResolver {
  const { stores, clock, random, pageContext } = options;

  const sendCodeProblem = (reply: FastifyReply, status: keyof typeof CODE_PROBLEMS) =>
    sendErrorPage(
      reply,
      400,
      {
        title: reply.request.language.text('device.codeProblem.title'),
        message: reply.request.language.text(CODE_PROBLEMS[status]),
        code: `user_code_${status}`,
      },
      pageContext,
    );

  return async (deviceCodeHash, reply) => {
    const lookup = await findDeviceAuthorization(deviceCodeHash, { stores, clock });
    if (lookup.status !== 'pending') {
      sendCodeProblem(reply, lookup.status);
      return null;
    }
    const { client, deviceCode } = lookup;
    const outcome = (outcome: 'approved' | 'denied') =>
      sendHtml(
        reply,
        200,
        renderDeviceOutcomePage({
          outcome,
          clientName: client.clientName,
          basePath: pageContext.basePath,
          language: pageLanguageOf(reply.request),
        }),
      );
    const purpose: InteractionPurpose = {
      client,
      // prompt=consent: the consent page is shown whatever was approved before (see above).
      requirements: {
        client,
        scopes: [...deviceCode.scopes],
        resources: [...deviceCode.resources],
        prompt: ['consent'],
        maxAge: null,
      },
      loginHint: undefined,
      formActionSources: [],
      consentNotice: 'device.consentNotice',
      async complete(reply, step) {
        const approved = await approveDeviceAuthorization(
          lookup,
          {
            sub: step.user.sub,
            scopes: step.scopes,
            sid: step.session.id,
            authTime: step.session.authTime,
            // RFC 8628 has no acr_values: the level the approval had to reach is the demand.
            ...levelOf(step.session, { acrValues: [], required: step.required }),
          },
          { stores, clock, random },
        );
        // Expired, or decided in another tab, while the consent page was open.
        if (approved === null) return sendCodeProblem(reply, 'used');
        reply.log.info({ client: client.clientId, grant: approved.grantId }, 'device approved');
        return outcome('approved');
      },
      async deny(reply, sub) {
        if (!(await denyDeviceAuthorization(deviceCodeHash, sub, { stores, clock }))) {
          return sendCodeProblem(reply, 'used');
        }
        return outcome('denied');
      },
      async fail(reply, error) {
        // Nothing can be granted to this user: the device is told `access_denied` as well.
        await denyDeviceAuthorization(deviceCodeHash, null, { stores, clock });
        reply.log.info({ error: error.code, detail: error.detail }, 'device authorization refused');
        return sendNothingGrantable(reply, pageContext);
      },
    };
    return purpose;
  };
}

const stringField = (source: unknown, name: string): string | undefined => {
  const value = (source as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

export const deviceVerificationRoutes: FastifyPluginAsync<DeviceVerificationOptions> = async (
  app,
  options,
) => {
  const { flow, stores, clock, pageContext } = options;
  const interactionUrl = (id: string, page: InteractionPage) =>
    `${pageContext.basePath}/interaction/${id}/${page}`;

  // Scoped to this plugin (`global: false`): only the code entry below is limited. RFC 8628 §5.1:
  // the user code is short, so guessing must be rate limited. Counters live in the database.
  await app.register(rateLimit, {
    global: false,
    store: databaseRateLimitStore(options.db),
    onExceeded: (request) =>
      audit(request.log, AUDIT_EVENTS.rateLimitExceeded, { limit: 'device_user_code', ip: request.ip }),
    errorResponseBuilder: (_request, context) =>
      Object.assign(new Error(`too many user-code attempts; retry in ${context.after}`), {
        statusCode: context.statusCode,
      }),
  });

  function sendCodePage(
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    userCode: string | undefined,
    errorMessage?: string,
  ) {
    const browserKey = app.ssoSessions.ensureBrowserKey(request, reply);
    const page = renderDeviceCodePage({
      csrfToken: csrfTokenFor(browserKey, 'device', CODE_FORM_ID),
      userCode,
      errorMessage,
      basePath: pageContext.basePath,
      language: pageLanguageOf(request),
    });
    return sendHtml(reply, status, page);
  }

  app.get(ENDPOINTS.deviceVerification.path, async (request, reply) => {
    // RFC 8628 §3.3.1 verification_uri_complete: show the code for the user to confirm, never act on it.
    const typed = stringField(request.query, 'user_code');
    const normalized = typed === undefined ? null : normalizeUserCode(typed);
    const prefill = normalized === null ? typed?.slice(0, 32) : formatUserCode(normalized);
    return sendCodePage(request, reply, 200, prefill);
  });

  app.post(
    ENDPOINTS.deviceVerification.path,
    {
      config: {
        rateLimit: {
          max: options.attemptsPerMinute,
          timeWindow: RATE_LIMIT_WINDOW_MS,
          groupId: 'device-user-code',
        },
      },
    },
    async (request, reply) => {
      const browserKey = app.ssoSessions.browserKey(request);
      if (
        browserKey === null ||
        !isValidCsrfToken(stringField(request.body, 'csrf'), browserKey, 'device', CODE_FORM_ID)
      ) {
        return sendFormExpiredPage(reply, pageContext);
      }
      const typed = (stringField(request.body, 'user_code') ?? '').slice(0, 64);
      const lookup = await findDeviceAuthorizationByUserCode(typed, { stores, clock });
      if (lookup.status !== 'pending') {
        request.log.info({ status: lookup.status }, 'user code refused');
        return sendCodePage(request, reply, 400, typed, request.language.text(CODE_PROBLEMS[lookup.status]));
      }

      const { deviceCode, client } = lookup;
      const session = await app.ssoSessions.current(request);
      const step = await flow.nextStep(
        {
          client,
          scopes: [...deviceCode.scopes],
          resources: [...deviceCode.resources],
          prompt: ['consent'],
          maxAge: null,
        },
        session,
        null,
      );
      if (step.kind === 'error') {
        await denyDeviceAuthorization(deviceCode.deviceCodeHash, session?.sub ?? null, { stores, clock });
        return sendNothingGrantable(reply, pageContext);
      }
      const interaction = await flow.startInteraction(
        { params: {}, resources: [] },
        browserKey,
        deviceCode.deviceCodeHash,
      );
      // With an SSO session: straight to consent (prompt=consent makes that the earliest end), after
      // the second factor when the session has not met the level the same rules as /authorize ask.
      const page = step.kind === 'complete' ? 'consent' : step.kind;
      return reply.header('cache-control', 'no-store').redirect(interactionUrl(interaction.id, page), 303);
    },
  );
};
