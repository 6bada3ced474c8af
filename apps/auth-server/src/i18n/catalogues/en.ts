/**
 * The source catalogue: every other language has exactly these keys (a missing or extra key does
 * not compile) and the same `{placeholders}` (test/i18n-catalogues.test.ts). ICU MessageFormat:
 * `{name}` is a value, `{count, plural, one {…} other {…}}` a plural; `<strong>`, `<code>`, `<em>`
 * become those elements, any other tag (`<left>`) is an element the page supplies. Write no other
 * `<`, and quote a literal `{` as `'{'` (docs/languages.md "Writing messages").
 */
export const en = {
  'layout.languages': 'Language',

  'login.title': 'Sign in',
  'login.lead': 'to continue to <strong>{client}</strong>',
  'login.username': 'Username',
  'login.password': 'Password',
  'login.submit': 'Sign in',
  'login.forgotPassword': 'Forgot your password?',
  'login.withProvider': 'Sign in with {provider}',
  'login.withPasskey': 'Sign in with a passkey',
  'login.withKerberos': 'Sign in with your organisation account (Kerberos)',
  'login.invalidCredentials': 'Invalid username or password.',
  'login.tooManyAttempts':
    'Too many failed sign-in attempts. Please try again in {unit, select, seconds {{count, plural, one {# second} other {# seconds}}} other {{count, plural, one {# minute} other {# minutes}}}}.',
  'login.lastAttempt': '1 attempt left before a {minutes}-minute lock.',

  'otp.title': 'Two-step verification',
  'otp.label': 'Code from your authenticator app',
  'otp.submit': 'Verify',
  'otp.usePasskey': 'Use a passkey instead',
  'otp.useRecoveryCode': 'Use a recovery code instead',
  'otp.invalidCode': 'That code is not valid. Enter the current code from your app.',

  'recovery.title': 'Use a recovery code',
  'recovery.label': 'Recovery code',
  'recovery.format':
    'Ten letters and digits from your saved list, like ABCDE-23456 (the dash and case do not matter).',
  'recovery.submit': 'Verify',
  'recovery.useApp': 'Use the code from your authenticator app instead',
  'recovery.invalidCode': 'That recovery code is not valid or was already used.',
  'recovery.usedTitle': 'Recovery code accepted',
  'recovery.usedUp':
    'That recovery code is now used up. You have <left>{remaining, plural, one {# recovery code left} other {# recovery codes left}}</left>.',
  'recovery.getNewSetSoon': 'Get a new set soon on {accountLink}.',
  'recovery.getNewSetAnyTime': 'You can get a new set any time on {accountLink}.',
  'recovery.accountPage': 'your account page',
  'recovery.continue': 'Continue',

  'consent.title': 'Allow {client} access?',
  'consent.lead': '<strong>{client}</strong>{fromHost} would like to:',
  'consent.fromHost': '(from {host})',
  'consent.signedInAs': 'Signed in as <strong>{user}</strong>.',
  'consent.deny': 'Deny',
  'consent.allow': 'Allow',
  'consent.withdraw': 'You can withdraw this access at any time on {accountLink}.',
  'consent.accountPage': 'your account page',
  'scope.openid': 'Confirm who you are when you sign in',
  'scope.offline_access': 'Keep access when you are not using the application',
  'scope.claims': 'See {claims}',
  'scope.read': 'View your {resource}',
  'scope.write': 'Create and change your {resource}',
  'scope.other': 'Use the permission “{scope}”',
  'claim.name': 'your name',
  'claim.email': 'your email address',
  'claim.groups': 'the groups you belong to',

  'error.code': 'Error code: <code>{errorCode}</code>',
  'error.defaultAdvice': 'Return to the application you came from and try again.',
  'error.startPage': 'Go to the start page',
  'error.accountPage': 'Go to your account',
  'error.alreadyCompleted.title': 'This sign-in request was already completed',
  'error.alreadyCompleted.message': 'Return to the application; it may already have signed you in.',
  'error.expired.title': 'This sign-in request has expired',
  'error.expired.message':
    'The sign-in took too long or was already completed. Start again from the application.',
  'error.expired.messageNoApp':
    'The sign-in took too long or was already completed. Start again from the application you came from.',
  'error.otherBrowser.title': 'Sign-in started in another browser',
  'error.otherBrowser.message': 'Please start signing in again from the application, in this browser.',
  'error.formExpired.title': 'This form has expired',
  'error.formExpired.message':
    'The form could not be verified: it was open too long, or came from another browser.',
  'error.formExpired.advice': 'Go back, reload the page, and send the form again.',

  'logout.title': 'Sign out?',
  'logout.question': 'Do you want to sign out?',
  'logout.clientAsks': '<strong>{client}</strong> asks you to sign out.',
  'logout.explanation':
    'Signing out ends your session here and in the applications you signed in to with it. If you did not ask to sign out, close this page.',
  'logout.submit': 'Sign out',
  'signedOut.title': 'You are signed out',
  'signedOut.done': 'You have been signed out.',
  'signedOut.closeOrStart':
    'You have been signed out. You can close this window, or go on from the start page.',
  'signedOut.continue': 'Continue',
  'signedOut.frameTitle': 'Signing out of an application',

  'device.title': 'Connect a device',
  'device.lead': 'Enter the code shown on your device.',
  'device.code': 'Code',
  'device.submit': 'Continue',
  'device.warning': 'Only continue if you started signing in on a device of your own just now.',
  'device.approvedTitle': 'Device connected',
  'device.approved': '<strong>{client}</strong> is now signed in on your device.',
  'device.approvedAdvice': 'You can close this window and return to your device.',
  'device.deniedTitle': 'Access denied',
  'device.denied': '<strong>{client}</strong> was not given access.',
  'device.deniedAdvice': 'You can close this window. The device will report that access was denied.',
  'device.consentNotice':
    'Only allow this if you started signing in on your own device just now. Someone who sent you a code cannot use it without your approval.',
  'device.codeProblem.title': 'This code can no longer be used',
  'device.codeInvalid': 'That code is not valid. Check the code shown on your device and try again.',
  'device.codeExpired': 'That code has expired. Start again on your device to get a new code.',
  'device.codeUsed':
    'That code has already been used. Start again on your device if you still need to sign in.',
  'device.nothingGrantable.title': 'This device cannot be given access',
  'device.nothingGrantable.message': 'Your account cannot grant any of the permissions the device asked for.',

  'continueToProvider.title': 'Linking {provider}',
  'continueToProvider.lead':
    'Taking you to {provider} to sign in there. When you are back, it is linked to your account.',
  'continueToProvider.continue': 'Continue to {provider}',
  'continueToProvider.back': 'Back to your account',

  'passkey.use': 'Use your passkey',
  'passkey.failed': 'That passkey could not be verified. Please try again, or choose another way.',
  'passkey.usePassword': 'Sign in with your password instead',
  'passkey.useApp': 'Enter a code from your authenticator app instead',

  'enrol.title': 'Set up an authenticator app',
  'enrol.scan': 'Scan this code with an authenticator app:',
  'enrol.qrAlt': 'QR code of the authenticator app secret',
  'enrol.key': 'Or enter this key: <key></key>',
  'enrol.enterCode': 'Enter the 6-digit code the app shows.',
  'enrol.submit': 'Confirm',
  'enrol.leadPasskey': '{client} asks for a passkey when you sign in. Set up a passkey to continue.',
  'enrol.leadApp':
    '{client} requires a second step when you sign in. Set up an authenticator app to continue.',
  'enrol.setUpPasskey': 'Set up a passkey',
  'enrol.setUpPasskeyInstead': 'Set up a passkey instead',

  'forgot.title': 'Forgot your password?',
  'forgot.lead':
    'Enter the e-mail address of your account. If it belongs to an account, we send a link to choose a new password.',
  'forgot.email': 'E-mail address',
  'forgot.submit': 'Send the link',
  'forgot.sentTitle': 'Check your mail',
  'forgot.sent': 'If an account uses that address, a link to choose a new password is on its way to it.',
  'forgot.sentAdvice':
    'The link works once, for {minutes} minutes. Nothing arrived? Check the spam folder, or ask again in a few minutes.',
  'forgot.formExpired': 'The form expired. Please enter your address again.',
  'forgot.limitedTitle': 'Too many attempts',
  'forgot.limited': 'Too many requests for a reset link. Please wait a few minutes, then try again.',
  'reset.mismatch': 'The new password and its confirmation differ.',
  'reset.title': 'Choose a new password',
  'reset.lead': 'Choose a new password: at least {length} characters, not a common one.',
  'reset.newPassword': 'New password',
  'reset.confirmPassword': 'New password again',
  'reset.submit': 'Set the new password',
  'reset.doneTitle': 'Password changed',
  'reset.done': 'Your password was changed. Every session of your account was signed out.',
  'reset.doneAdvice':
    'Go back to the application and sign in with the new password, or sign in to your account here.',
  'reset.signInToAccount': 'Sign in to your account',
  'reset.invalidTitle': 'Link no longer valid',
  'reset.invalid':
    'This link is no longer valid: it was already used, it expired, a newer link was sent, or the password was changed since.',
  'reset.askAgain': 'Ask for a new link',

  'mail.reset.subject': 'Reset your password for {site}',
  'mail.reset.heading': 'Reset your password',
  'mail.reset.asked': 'Someone asked to reset the password of the account with this address at {site}.',
  'mail.reset.validity':
    'The link below works once, for {minutes} minutes. Opening it changes nothing until you choose a new password on the page.',
  'mail.reset.action': 'Choose a new password',
  'mail.reset.footer': 'If you did not ask for this, ignore this mail: your password stays as it is.',
  'mail.notice.happened': '{what} at {site} on {at}, from {device} (address {ip}).',
  'mail.notice.footer':
    'If this was not you, change your password at once on the account page of {site} (or with "Forgot your password?" on its sign-in page), check your sign-in methods, and tell your administrator.',
  'mail.notice.subjectAt': '{subject} at {site}',
  'mail.factorAdded.subject': 'A sign-in method was added to your account',
  'mail.factorAdded.heading': 'A sign-in method was added',
  'mail.factorAdded.what': 'A passkey or authenticator app was added to your account',
  'mail.factorRemoved.subject': 'A sign-in method was removed from your account',
  'mail.factorRemoved.heading': 'A sign-in method was removed',
  'mail.factorRemoved.what': 'A passkey or authenticator app was removed from your account',
  'mail.recoveryCodeUsed.subject': 'A recovery code of your account was used',
  'mail.recoveryCodeUsed.heading': 'A recovery code was used',
  'mail.recoveryCodeUsed.what': 'One of your recovery codes was used to sign in to your account',
  'mail.identityLinked.subject': 'A sign-in service was linked to your account',
  'mail.identityLinked.heading': 'A sign-in service was linked',
  'mail.identityLinked.what': 'Signing in with {service} was linked to your account',
  'mail.identityUnlinked.subject': 'A sign-in service was unlinked from your account',
  'mail.identityUnlinked.heading': 'A sign-in service was unlinked',
  'mail.identityUnlinked.what': 'Signing in with {service} was unlinked from your account',
  'mail.anotherService': 'another service',
  'mail.passwordChanged.subject': 'Your password for {site} was changed',
  'mail.passwordChanged.heading': 'Your password was changed',
  'mail.passwordChanged.what':
    'The password of your account at {site} was changed on {at} from {device} (address {ip}).',
  'mail.passwordChanged.ended':
    'Every session and app sign-in of the account was ended; sign in again with the new password.',
  'mail.passwordChanged.footer':
    'If this was not you, reset your password at once with "Forgot your password?" on the sign-in page of {site}, and tell your administrator.',
  'mail.verify.subject': 'Confirm your address for {site}',
  'mail.verify.heading': 'Confirm your address',
  'mail.verify.asked': 'Someone asked {site} to confirm that this address belongs to their account.',
  'mail.verify.validity':
    'The link below works once, for {hours} hours. Opening it changes nothing until you press the button on the page.',
  'mail.verify.action': 'Confirm this address',
  'mail.ignore': 'If you did not ask for this, ignore this mail.',
  'mail.change.subject': 'Confirm your new address for {site}',
  'mail.change.heading': 'Confirm your new address',
  'mail.change.asked':
    'Someone asked {site} to use this address for their account. Until it is confirmed, the account keeps its old address.',
  'mail.change.validity':
    'The link below works once, for 24 hours. Opening it changes nothing until you press the button on the page.',
  'mail.change.action': 'Use this address',
  'mail.changeNotice.subject': 'The address of your account at {site} is being changed',
  'mail.changeNotice.heading': 'Your address is being changed',
  'mail.changeNotice.what':
    'On {at}, from {device} (address {ip}), your account at {site} asked to use {newAddress} instead of this address. The change happens once the new address is confirmed.',
  'mail.changeNotice.action': 'This was not me: undo it and sign out everywhere',
  'mail.changeNotice.footer': 'The link works once, for 7 days. If this was you, there is nothing to do.',
  'mail.link.subject': 'Link {provider} to your account at {site}',
  'mail.link.heading': 'Use {provider} to sign in',
  'mail.link.asked':
    'Someone signing in to {site} with {provider} asked to link that sign-in to the account with this address.',
  'mail.link.validity':
    'The link below works once, for {minutes} minutes, and only in the browser where that sign-in started. Opening it changes nothing until you press the button on the page.',
  'mail.link.action': 'Link {provider} and sign in',
  'mail.link.footer': 'If you did not ask for this, ignore this mail: nothing is linked without it.',
} as const;

export type MessageKey = keyof typeof en;

/** What every language provides: each key of the source, as an ICU message. */
export type Catalogue = { readonly [Key in MessageKey]: string };
