// The recovery codes page's "Copy" button: puts the codes, one a line, on the clipboard and says
// so in the status line. An external file, because the Content-Security-Policy allows no inline
// script; without JavaScript the button stays hidden and "Download" still works.
(() => {
  const button = document.getElementById('copy-recovery-codes');
  const status = document.getElementById('recovery-codes-status');
  if (!button || !status || !navigator.clipboard) return;
  const codes = Array.from(document.querySelectorAll('[data-recovery-code]')).map((element) =>
    element.getAttribute('data-recovery-code'),
  );
  button.hidden = false;
  button.addEventListener('click', () => {
    navigator.clipboard.writeText(`${codes.join('\n')}\n`).then(
      () => {
        status.textContent = 'Copied. Paste them somewhere safe.';
      },
      () => {
        status.textContent = 'Copying was not allowed; use Download instead.';
      },
    );
  });
})();
