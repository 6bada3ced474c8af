// Runs the WebAuthn ceremony of each form marked `data-passkey-ceremony` (src/pages/passkey.ts):
// on submit, the browser creates (`register`) or uses (`authenticate`) a passkey with the options
// the server embedded in `data-passkey-options`, puts the result into the hidden `credential`
// field, and the form posts it. @simplewebauthn/browser (loaded before this file) does the
// encoding; an external file because the Content-Security-Policy allows no inline script.
(() => {
  const webauthn = globalThis.SimpleWebAuthnBrowser;

  /** Shows `text` in the form's alert (role="alert", so screen readers announce it). */
  function showError(form, text) {
    const alert = form.querySelector('[data-passkey-error]');
    if (!alert) return;
    alert.textContent = text;
    alert.hidden = false;
  }

  /** What a person can do about a failed ceremony (DOMException names, WebAuthn L3 §5.1.3, §5.1.4). */
  function messageOf(error) {
    const name = error?.cause?.name ?? error?.name;
    if (name === 'InvalidStateError') return 'This passkey is already registered for your account.';
    if (name === 'NotAllowedError' || name === 'AbortError') {
      return 'The passkey request was cancelled or timed out. Please try again.';
    }
    return 'The passkey could not be used. Please try again, or choose another way.';
  }

  async function runCeremony(form) {
    const optionsJSON = JSON.parse(form.dataset.passkeyOptions);
    const credential =
      form.dataset.passkeyCeremony === 'register'
        ? await webauthn.startRegistration({ optionsJSON })
        : await webauthn.startAuthentication({ optionsJSON });
    form.elements.namedItem('credential').value = JSON.stringify(credential);
    form.submit();
  }

  /** The login page's one-click button: the ceremony, then a form built here posts the result. */
  async function runButton(button) {
    const optionsJSON = JSON.parse(button.dataset.passkeyOptions);
    const credential = await webauthn.startAuthentication({ optionsJSON });
    const form = document.createElement('form');
    form.method = 'post';
    form.action = button.dataset.passkeyAction;
    form.hidden = true;
    for (const [name, value] of [
      ['csrf', button.dataset.passkeyCsrf],
      ['credential', JSON.stringify(credential)],
    ]) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
  }

  for (const button of document.querySelectorAll('button[data-passkey-action]')) {
    if (!webauthn?.browserSupportsWebAuthn()) continue;
    const container = button.parentElement;
    button.hidden = false;
    button.addEventListener('click', () => {
      runButton(button).catch((error) => showError(container, messageOf(error)));
    });
  }

  for (const form of document.querySelectorAll('form[data-passkey-ceremony]')) {
    if (!webauthn?.browserSupportsWebAuthn()) {
      showError(form, 'This browser cannot use passkeys.');
      for (const button of form.querySelectorAll('button')) button.disabled = true;
      continue;
    }
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const alert = form.querySelector('[data-passkey-error]');
      if (alert) alert.hidden = true;
      runCeremony(form).catch((error) => showError(form, messageOf(error)));
    });
  }
})();
