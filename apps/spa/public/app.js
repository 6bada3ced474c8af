// The public-client SPA: authorization code + PKCE through oidc-client-ts (loaded before this
// module as window.oidc), tokens and sign-in state in sessionStorage, no iframe silent renew. An
// expired access token is renewed with the refresh token (rotated by the server at every use).

const $ = (selector) => {
  const element = document.querySelector(selector);
  if (element === null) throw new Error(`missing ${selector}`);
  return element;
};

function setStatus(text) {
  $('#status').textContent = text;
}

function showError(text) {
  $('#error').textContent = text;
  $('#error').hidden = text === '';
}

const REFRESH_COUNT_KEY = 'spa.refreshes';
const refreshCount = () => Number(sessionStorage.getItem(REFRESH_COUNT_KEY) ?? '0');

async function loadConfig() {
  const response = await fetch('/config.json');
  if (!response.ok) throw new Error('The sign-in service cannot be reached. Try again in a moment.');
  return response.json();
}

function createUserManager(config) {
  const { UserManager, WebStorageStateStore } = window.oidc;
  const store = new WebStorageStateStore({ store: window.sessionStorage });
  return new UserManager({
    authority: config.authority,
    // The provider serves discovery to servers, not to other origins; our server read it for us.
    metadata: config.metadata,
    client_id: config.client_id,
    redirect_uri: `${location.origin}/callback`,
    post_logout_redirect_uri: `${location.origin}/`,
    response_type: 'code',
    scope: config.scope,
    userStore: store,
    stateStore: store,
    // Renewal is explicit (signinSilent with the refresh token), never through a hidden iframe.
    automaticSilentRenew: false,
    monitorSession: false,
    loadUserInfo: false,
    // Sign-out revokes the refresh token: offline access would otherwise outlive the provider session.
    revokeTokensOnSignout: true,
    revokeTokenTypes: ['refresh_token'],
  });
}

/** The stored user with a usable access token, renewed with the refresh token when it has expired. */
async function currentUser(manager, { forceRenewal = false } = {}) {
  const user = await manager.getUser();
  if (user === null) return null;
  if (!user.expired && !forceRenewal) return user;
  if (!user.refresh_token) return null;
  const renewed = await manager.signinSilent();
  sessionStorage.setItem(REFRESH_COUNT_KEY, String(refreshCount() + 1));
  return renewed;
}

function renderUser(user) {
  $('#user-name').textContent = user.profile.name ?? user.profile.sub;
  $('#scopes').textContent = user.scope ?? '';
  $('#expires').textContent = user.expires_at
    ? new Date(user.expires_at * 1000).toLocaleTimeString()
    : 'unknown';
  $('#refreshes').textContent = String(refreshCount());
  $('#signed-out').hidden = true;
  $('#signed-in').hidden = false;
}

function renderSignedOut(manager) {
  $('#signed-in').hidden = true;
  $('#signed-out').hidden = false;
  setStatus('You are not signed in.');
  $('#sign-in').onclick = () => {
    $('#sign-in').disabled = true;
    manager.signinRedirect().catch((error) => {
      $('#sign-in').disabled = false;
      showError(`Sign-in could not start: ${error.message}`);
    });
  };
}

function renderOrders(orders) {
  const items = orders.map((order) => {
    const item = document.createElement('li');
    item.textContent = `Order #${order.id}: ${order.quantity} × item, $${order.total} (${order.status})`;
    return item;
  });
  $('#orders').replaceChildren(...items);
  $('#orders-empty').hidden = orders.length > 0;
}

async function callOrdersApi(config, user) {
  return fetch(config.api_url, { headers: { Authorization: `Bearer ${user.access_token}` } });
}

async function loadOrders(manager, config) {
  showError('');
  setStatus('Loading your orders…');
  const before = refreshCount();
  let user = await currentUser(manager);
  if (user === null) return renderSignedOut(manager);
  let response = await callOrdersApi(config, user);
  if (response.status === 401) {
    // Revoked or expired early: one renewal, one retry (RFC 6750 §3.1 invalid_token).
    user = await currentUser(manager, { forceRenewal: true });
    if (user === null) return renderSignedOut(manager);
    response = await callOrdersApi(config, user);
  }
  if (!response.ok) throw new Error(`The orders API answered ${response.status}`);
  const orders = await response.json();
  renderUser(user);
  renderOrders(orders);
  const renewed = refreshCount() > before ? ' (access token refreshed)' : '';
  setStatus(`Loaded ${orders.length} order${orders.length === 1 ? '' : 's'}${renewed}.`);
}

async function main() {
  let config;
  try {
    config = await loadConfig();
  } catch (error) {
    setStatus('');
    showError(error.message);
    return;
  }
  const manager = createUserManager(config);
  // "Your account": the provider's account page, told which client to link back to.
  $('#account-link').href =
    `${config.authority.replace(/\/$/, '')}/account?${new URLSearchParams({ from: config.client_id })}`;

  if (location.pathname === '/callback') {
    try {
      await manager.signinRedirectCallback();
    } catch (error) {
      // e.g. access_denied when the person refused consent (RFC 6749 §4.1.2.1).
      const code = error && typeof error.error === 'string' ? error.error : null;
      showError(code ? `Sign-in was not completed: ${code}` : `Sign-in failed: ${error.message}`);
      if (code) $('#error').dataset.error = code;
    }
    history.replaceState(null, '', '/');
  }

  $('#load-orders').addEventListener('click', () => {
    loadOrders(manager, config).catch((error) => showError(`Could not load orders: ${error.message}`));
  });
  $('#sign-out').addEventListener('click', () => {
    sessionStorage.removeItem(REFRESH_COUNT_KEY);
    manager.signoutRedirect().catch((error) => showError(`Sign-out failed: ${error.message}`));
  });

  const user = await manager.getUser();
  if (user === null) {
    renderSignedOut(manager);
    return;
  }
  renderUser(user);
  setStatus('Signed in.');
}

main();
