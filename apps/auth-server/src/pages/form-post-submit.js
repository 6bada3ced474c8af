// Submits the form_post response (OAuth 2.0 Form Post Response Mode §2) as soon as the page loads.
// An external file, because the Content-Security-Policy allows no inline script.
document.getElementById('form-post-response')?.submit();
