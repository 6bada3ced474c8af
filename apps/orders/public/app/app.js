// The orders single-page app. It talks to this origin's backend-for-frontend only: the session
// cookie is HttpOnly and the access token stays on the server, so nothing here can read a token.
// Every call carries `X-CSRF: 1`, which a cross-site page cannot add without a CORS preflight.

const $ = (selector) => {
  const element = document.querySelector(selector);
  if (element === null) throw new Error(`missing ${selector}`);
  return element;
};

class SignedOutError extends Error {}

/** A call to /bff/*: JSON in and out, 401 means the session is gone. */
async function bff(path, init = {}) {
  const response = await fetch(path, {
    ...init,
    credentials: 'same-origin',
    headers: { 'X-CSRF': '1', Accept: 'application/json', ...init.headers },
  });
  if (response.status === 401) throw new SignedOutError();
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const message = body && typeof body.message === 'string' ? body.message : response.statusText;
    throw new Error(`${message} (${response.status})`);
  }
  return body;
}

function setStatus(text) {
  $('#status').textContent = text;
}

function showError(text) {
  const error = $('#error');
  error.textContent = text;
  error.hidden = text === '';
}

function showSignedOut() {
  $('#account').hidden = true;
  $('#signed-in').hidden = true;
  $('#signed-out').hidden = false;
  setStatus('You are not signed in.');
}

const money = (total) => `$${total}`;
const when = (iso) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function renderOrders(orders) {
  const rows = orders.map((order) => {
    const row = document.createElement('tr');
    for (const text of [
      `#${order.id}`,
      String(order.quantity),
      money(order.total),
      order.status,
      when(order.createdAt),
    ]) {
      const cell = document.createElement('td');
      cell.textContent = text;
      row.append(cell);
    }
    return row;
  });
  // Oldest first, as GET /orders, the SPA and the CLI list them.
  $('#orders tbody').replaceChildren(...rows);
  $('#orders').hidden = orders.length === 0;
  $('#no-orders').hidden = orders.length !== 0;
}

async function loadOrders() {
  const orders = await bff('/bff/orders');
  renderOrders(orders);
  return orders;
}

async function placeOrder(event) {
  event.preventDefault();
  const input = $('#quantity');
  const quantity = Number(input.value);
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > 1000) {
    input.setAttribute('aria-invalid', 'true');
    // A success message from an earlier order must not stand beside this error.
    setStatus('');
    showError('Enter a whole number of items from 1 to 1000.');
    input.focus();
    return;
  }
  input.removeAttribute('aria-invalid');
  showError('');
  const button = $('#place-order button');
  button.disabled = true;
  try {
    const order = await bff('/bff/orders', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ quantity }),
    });
    await loadOrders();
    setStatus(`Order #${order.id} placed: ${order.quantity} item${order.quantity === 1 ? '' : 's'}.`);
  } catch (error) {
    setStatus('');
    handleFailure(error);
  } finally {
    button.disabled = false;
  }
}

function handleFailure(error) {
  if (error instanceof SignedOutError) {
    showSignedOut();
    return;
  }
  showError(`Something went wrong: ${error.message}`);
}

async function start() {
  $('#place-order').addEventListener('submit', placeOrder);
  try {
    const user = await bff('/bff/user');
    $('#user-name').textContent = user.name ?? user.sub;
    // The sign-out button POSTs with the session's CSRF token (a cross-site GET /logout only asks).
    $('#sign-out-csrf').value = user.signOutToken;
    $('#account').hidden = false;
    $('#signed-out').hidden = true;
    $('#signed-in').hidden = false;
    setStatus('Loading your orders…');
    const orders = await loadOrders();
    // With no orders the list itself says "You have no orders yet."; one message is enough.
    setStatus(
      orders.length === 0
        ? ''
        : orders.length === 1
          ? 'You have 1 order.'
          : `You have ${orders.length} orders.`,
    );
  } catch (error) {
    handleFailure(error);
  }
}

start();
