import type { Catalogue } from './en.js';

/** German, formal address (Sie); "Anmelden" for signing in, "Bestätigungscode" for the app's code. */
export const de: Catalogue = {
  'layout.languages': 'Sprache',

  'login.title': 'Anmelden',
  'login.lead': 'um mit <strong>{client}</strong> fortzufahren',
  'login.username': 'Benutzername',
  'login.password': 'Passwort',
  'login.submit': 'Anmelden',
  'login.forgotPassword': 'Passwort vergessen?',
  'login.withProvider': 'Mit {provider} anmelden',
  'login.withPasskey': 'Mit einem Passkey anmelden',
  'login.withKerberos': 'Mit dem Konto Ihrer Organisation anmelden (Kerberos)',
  'login.invalidCredentials': 'Benutzername oder Passwort ist falsch.',
  'login.tooManyAttempts':
    'Zu viele fehlgeschlagene Anmeldeversuche. Bitte versuchen Sie es in {unit, select, seconds {{count, plural, one {# Sekunde} other {# Sekunden}}} other {{count, plural, one {# Minute} other {# Minuten}}}} erneut.',
  'login.lastAttempt': 'Noch 1 Versuch, danach wird die Anmeldung für {minutes} Minuten gesperrt.',

  'otp.title': 'Bestätigung in zwei Schritten',
  'otp.label': 'Code aus Ihrer Authenticator-App',
  'otp.submit': 'Bestätigen',
  'otp.usePasskey': 'Stattdessen einen Passkey verwenden',
  'otp.useRecoveryCode': 'Stattdessen einen Wiederherstellungscode verwenden',
  'otp.invalidCode': 'Dieser Code ist ungültig. Geben Sie den aktuellen Code aus Ihrer App ein.',

  'recovery.title': 'Wiederherstellungscode verwenden',
  'recovery.label': 'Wiederherstellungscode',
  'recovery.format':
    'Zehn Buchstaben und Ziffern aus Ihrer gespeicherten Liste, etwa ABCDE-23456 (Bindestrich und Groß-/Kleinschreibung spielen keine Rolle).',
  'recovery.submit': 'Bestätigen',
  'recovery.useApp': 'Stattdessen den Code aus Ihrer Authenticator-App verwenden',
  'recovery.invalidCode': 'Dieser Wiederherstellungscode ist ungültig oder wurde bereits verwendet.',
  'recovery.usedTitle': 'Wiederherstellungscode angenommen',
  'recovery.usedUp':
    'Dieser Wiederherstellungscode ist nun verbraucht. Sie haben noch <left>{remaining, plural, one {# Wiederherstellungscode} other {# Wiederherstellungscodes}}</left>.',
  'recovery.getNewSetSoon': 'Holen Sie sich bald neue Codes auf {accountLink}.',
  'recovery.getNewSetAnyTime': 'Neue Codes erhalten Sie jederzeit auf {accountLink}.',
  'recovery.accountPage': 'Ihrer Kontoseite',
  'recovery.continue': 'Weiter',

  'consent.title': '{client} Zugriff erlauben?',
  'consent.lead': '<strong>{client}</strong>{fromHost} möchte:',
  'consent.fromHost': '(von {host})',
  'consent.signedInAs': 'Angemeldet als <strong>{user}</strong>.',
  'consent.deny': 'Ablehnen',
  'consent.allow': 'Erlauben',
  'consent.withdraw': 'Sie können diesen Zugriff jederzeit auf {accountLink} widerrufen.',
  'consent.accountPage': 'Ihrer Kontoseite',
  'scope.openid': 'Bei der Anmeldung bestätigen, wer Sie sind',
  'scope.offline_access': 'Zugriff behalten, auch wenn Sie die Anwendung gerade nicht nutzen',
  'scope.claims': '{claims} sehen',
  'scope.read': 'Ihre Daten in „{resource}“ ansehen',
  'scope.write': 'Ihre Daten in „{resource}“ anlegen und ändern',
  'scope.other': 'Die Berechtigung „{scope}“ nutzen',
  'claim.name': 'Ihren Namen',
  'claim.email': 'Ihre E-Mail-Adresse',
  'claim.groups': 'Ihre Gruppenzugehörigkeiten',

  'error.code': 'Fehlercode: <code>{errorCode}</code>',
  'error.defaultAdvice':
    'Kehren Sie zu der Anwendung zurück, von der Sie kamen, und versuchen Sie es erneut.',
  'error.startPage': 'Zur Startseite',
  'error.accountPage': 'Zu Ihrem Konto',
  'error.alreadyCompleted.title': 'Diese Anmeldung ist bereits abgeschlossen',
  'error.alreadyCompleted.message':
    'Kehren Sie zur Anwendung zurück; möglicherweise sind Sie dort schon angemeldet.',
  'error.expired.title': 'Diese Anmeldung ist abgelaufen',
  'error.expired.message':
    'Die Anmeldung hat zu lange gedauert oder ist bereits abgeschlossen. Beginnen Sie erneut in der Anwendung.',
  'error.expired.messageNoApp':
    'Die Anmeldung hat zu lange gedauert oder ist bereits abgeschlossen. Beginnen Sie erneut in der Anwendung, von der Sie kamen.',
  'error.otherBrowser.title': 'Anmeldung in einem anderen Browser begonnen',
  'error.otherBrowser.message':
    'Bitte beginnen Sie die Anmeldung erneut in der Anwendung, und zwar in diesem Browser.',
  'error.invalidRequest.title': 'Diese Anmeldeanfrage ist ungültig',
  'error.invalidRequest.message': 'Die Anwendung hat eine ungültige Anmeldeanfrage gesendet.',
  'error.formExpired.title': 'Dieses Formular ist abgelaufen',
  'error.formExpired.message':
    'Das Formular konnte nicht geprüft werden: Es war zu lange geöffnet oder stammt aus einem anderen Browser.',
  'error.formExpired.advice': 'Gehen Sie zurück, laden Sie die Seite neu und senden Sie das Formular erneut.',

  'logout.title': 'Abmelden?',
  'logout.question': 'Möchten Sie sich abmelden?',
  'logout.clientAsks': '<strong>{client}</strong> bittet Sie, sich abzumelden.',
  'logout.explanation':
    'Das Abmelden beendet Ihre Sitzung hier und in den Anwendungen, bei denen Sie sich damit angemeldet haben. Wenn Sie sich nicht abmelden wollten, schließen Sie diese Seite.',
  'logout.submit': 'Abmelden',
  'signedOut.title': 'Sie sind abgemeldet',
  'signedOut.done': 'Sie wurden abgemeldet.',
  'signedOut.closeOrStart':
    'Sie wurden abgemeldet. Sie können dieses Fenster schließen oder von der Startseite aus weitermachen.',
  'signedOut.continue': 'Weiter',
  'signedOut.frameTitle': 'Abmeldung bei einer Anwendung',

  'device.title': 'Gerät verbinden',
  'device.lead': 'Geben Sie den Code ein, den Ihr Gerät anzeigt.',
  'device.code': 'Code',
  'device.submit': 'Weiter',
  'device.warning':
    'Fahren Sie nur fort, wenn Sie gerade selbst auf einem eigenen Gerät mit der Anmeldung begonnen haben.',
  'device.approvedTitle': 'Gerät verbunden',
  'device.approved': '<strong>{client}</strong> ist jetzt auf Ihrem Gerät angemeldet.',
  'device.approvedAdvice': 'Sie können dieses Fenster schließen und zu Ihrem Gerät zurückkehren.',
  'device.deniedTitle': 'Zugriff abgelehnt',
  'device.denied': '<strong>{client}</strong> hat keinen Zugriff erhalten.',
  'device.deniedAdvice':
    'Sie können dieses Fenster schließen. Das Gerät meldet, dass der Zugriff abgelehnt wurde.',
  'device.consentNotice':
    'Erlauben Sie dies nur, wenn Sie gerade selbst auf Ihrem eigenen Gerät mit der Anmeldung begonnen haben. Wer Ihnen einen Code geschickt hat, kann ihn ohne Ihre Zustimmung nicht verwenden.',
  'device.codeProblem.title': 'Dieser Code kann nicht mehr verwendet werden',
  'device.codeInvalid':
    'Dieser Code ist ungültig. Prüfen Sie den Code auf Ihrem Gerät und versuchen Sie es erneut.',
  'device.codeExpired':
    'Dieser Code ist abgelaufen. Beginnen Sie auf Ihrem Gerät erneut, um einen neuen Code zu erhalten.',
  'device.codeUsed':
    'Dieser Code wurde bereits verwendet. Beginnen Sie auf Ihrem Gerät erneut, falls Sie sich noch anmelden müssen.',
  'device.nothingGrantable.title': 'Diesem Gerät kann kein Zugriff gewährt werden',
  'device.nothingGrantable.message':
    'Ihr Konto kann keine der Berechtigungen gewähren, die das Gerät angefragt hat.',

  'continueToProvider.title': '{provider} wird verknüpft',
  'continueToProvider.lead':
    'Sie werden zu {provider} weitergeleitet, um sich dort anzumelden. Wenn Sie zurück sind, ist es mit Ihrem Konto verknüpft.',
  'continueToProvider.continue': 'Weiter zu {provider}',
  'continueToProvider.back': 'Zurück zu Ihrem Konto',

  'passkey.use': 'Passkey verwenden',
  'passkey.failed':
    'Dieser Passkey konnte nicht geprüft werden. Bitte versuchen Sie es erneut oder wählen Sie einen anderen Weg.',
  'passkey.usePassword': 'Stattdessen mit Ihrem Passwort anmelden',
  'passkey.useApp': 'Stattdessen einen Code aus Ihrer Authenticator-App eingeben',

  'enrol.title': 'Authenticator-App einrichten',
  'enrol.scan': 'Scannen Sie diesen Code mit einer Authenticator-App:',
  'enrol.qrAlt': 'QR-Code des Schlüssels für die Authenticator-App',
  'enrol.key': 'Oder geben Sie diesen Schlüssel ein: <key></key>',
  'enrol.enterCode': 'Geben Sie den 6-stelligen Code ein, den die App anzeigt.',
  'enrol.submit': 'Bestätigen',
  'enrol.leadPasskey':
    '{client} verlangt bei der Anmeldung einen Passkey. Richten Sie einen Passkey ein, um fortzufahren.',
  'enrol.leadApp':
    '{client} verlangt bei der Anmeldung einen zweiten Schritt. Richten Sie eine Authenticator-App ein, um fortzufahren.',
  'enrol.leadSecondStep': '{client} verlangt bei der Anmeldung einen zweiten Schritt.',
  'enrol.setUpAppInstead': 'Stattdessen eine Authenticator-App einrichten',
  'enrol.setUpPasskey': 'Passkey einrichten',
  'enrol.setUpPasskeyInstead': 'Stattdessen einen Passkey einrichten',

  'forgot.title': 'Passwort vergessen?',
  'forgot.lead':
    'Geben Sie die E-Mail-Adresse Ihres Kontos ein. Gehört sie zu einem Konto, senden wir einen Link, mit dem Sie ein neues Passwort wählen.',
  'forgot.email': 'E-Mail-Adresse',
  'forgot.submit': 'Link senden',
  'forgot.sentTitle': 'Sehen Sie in Ihr Postfach',
  'forgot.sent':
    'Falls ein Konto diese Adresse verwendet, ist ein Link zum Wählen eines neuen Passworts unterwegs.',
  'forgot.sentAdvice':
    'Der Link funktioniert einmal und {minutes} Minuten lang. Nichts angekommen? Sehen Sie im Spam-Ordner nach oder fragen Sie in ein paar Minuten erneut.',
  'forgot.formExpired': 'Das Formular ist abgelaufen. Bitte geben Sie Ihre Adresse erneut ein.',
  'forgot.limitedTitle': 'Zu viele Versuche',
  'forgot.limited':
    'Zu viele Anfragen nach einem Link zum Zurücksetzen. Bitte warten Sie ein paar Minuten und versuchen Sie es dann erneut.',
  'reset.mismatch': 'Das neue Passwort und seine Wiederholung stimmen nicht überein.',
  'reset.title': 'Neues Passwort wählen',
  'reset.lead': 'Wählen Sie ein neues Passwort: mindestens {length} Zeichen und kein gängiges.',
  'reset.newPassword': 'Neues Passwort',
  'reset.confirmPassword': 'Neues Passwort wiederholen',
  'reset.submit': 'Neues Passwort speichern',
  'reset.doneTitle': 'Passwort geändert',
  'reset.done': 'Ihr Passwort wurde geändert. Alle Sitzungen Ihres Kontos wurden abgemeldet.',
  'reset.doneAdvice':
    'Kehren Sie zur Anwendung zurück und melden Sie sich mit dem neuen Passwort an, oder melden Sie sich hier bei Ihrem Konto an.',
  'reset.signInToAccount': 'Bei Ihrem Konto anmelden',
  'reset.invalidTitle': 'Link nicht mehr gültig',
  'reset.invalid':
    'Dieser Link ist nicht mehr gültig: Er wurde schon benutzt, ist abgelaufen, ein neuerer Link wurde gesendet, oder das Passwort wurde seitdem geändert.',
  'reset.askAgain': 'Neuen Link anfordern',

  'mail.reset.subject': 'Passwort für {site} zurücksetzen',
  'mail.reset.heading': 'Passwort zurücksetzen',
  'mail.reset.asked': 'Jemand möchte das Passwort des Kontos mit dieser Adresse bei {site} zurücksetzen.',
  'mail.reset.validity':
    'Der Link unten funktioniert einmal und {minutes} Minuten lang. Das Öffnen allein ändert nichts; erst wenn Sie auf der Seite ein neues Passwort wählen.',
  'mail.reset.action': 'Neues Passwort wählen',
  'mail.reset.footer':
    'Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ihr Passwort bleibt, wie es ist.',
  'mail.notice.happened': '{what} – bei {site} am {at}, von {device} (Adresse {ip}).',
  'mail.notice.footer':
    'Wenn Sie das nicht waren, ändern Sie sofort Ihr Passwort auf der Kontoseite von {site} (oder über „Passwort vergessen?“ auf der Anmeldeseite), prüfen Sie Ihre Anmeldemethoden und informieren Sie Ihre Administration.',
  'mail.notice.subjectAt': '{subject} ({site})',
  'mail.factorAdded.subject': 'Ihrem Konto wurde eine Anmeldemethode hinzugefügt',
  'mail.factorAdded.heading': 'Anmeldemethode hinzugefügt',
  'mail.factorAdded.what': 'Ihrem Konto wurde ein Passkey oder eine Authenticator-App hinzugefügt',
  'mail.factorRemoved.subject': 'Eine Anmeldemethode wurde aus Ihrem Konto entfernt',
  'mail.factorRemoved.heading': 'Anmeldemethode entfernt',
  'mail.factorRemoved.what': 'Ein Passkey oder eine Authenticator-App wurde aus Ihrem Konto entfernt',
  'mail.recoveryCodeUsed.subject': 'Ein Wiederherstellungscode Ihres Kontos wurde verwendet',
  'mail.recoveryCodeUsed.heading': 'Wiederherstellungscode verwendet',
  'mail.recoveryCodeUsed.what':
    'Mit einem Ihrer Wiederherstellungscodes hat sich jemand bei Ihrem Konto angemeldet',
  'mail.identityLinked.subject': 'Ein Anmeldedienst wurde mit Ihrem Konto verknüpft',
  'mail.identityLinked.heading': 'Anmeldedienst verknüpft',
  'mail.identityLinked.what': 'Die Anmeldung über {service} wurde mit Ihrem Konto verknüpft',
  'mail.identityUnlinked.subject': 'Ein Anmeldedienst wurde von Ihrem Konto getrennt',
  'mail.identityUnlinked.heading': 'Anmeldedienst getrennt',
  'mail.identityUnlinked.what': 'Die Anmeldung über {service} wurde von Ihrem Konto getrennt',
  'mail.anotherService': 'einen anderen Dienst',
  'mail.passwordChanged.subject': 'Ihr Passwort für {site} wurde geändert',
  'mail.passwordChanged.heading': 'Ihr Passwort wurde geändert',
  'mail.passwordChanged.what':
    'Das Passwort Ihres Kontos bei {site} wurde am {at} geändert, von {device} (Adresse {ip}).',
  'mail.passwordChanged.ended':
    'Alle Sitzungen und App-Anmeldungen des Kontos wurden beendet; melden Sie sich mit dem neuen Passwort erneut an.',
  'mail.passwordChanged.footer':
    'Wenn Sie das nicht waren, setzen Sie Ihr Passwort sofort über „Passwort vergessen?“ auf der Anmeldeseite von {site} zurück und informieren Sie Ihre Administration.',
  'mail.verify.subject': 'Adresse für {site} bestätigen',
  'mail.verify.heading': 'Adresse bestätigen',
  'mail.verify.asked': 'Jemand hat {site} gebeten zu bestätigen, dass diese Adresse zu seinem Konto gehört.',
  'mail.verify.validity':
    'Der Link unten funktioniert einmal und {hours} Stunden lang. Das Öffnen allein ändert nichts; erst der Klick auf die Schaltfläche auf der Seite.',
  'mail.verify.action': 'Diese Adresse bestätigen',
  'mail.ignore': 'Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail.',
  'mail.change.subject': 'Neue Adresse für {site} bestätigen',
  'mail.change.heading': 'Neue Adresse bestätigen',
  'mail.change.asked':
    'Jemand möchte diese Adresse bei {site} für sein Konto verwenden. Bis sie bestätigt ist, behält das Konto seine bisherige Adresse.',
  'mail.change.validity':
    'Der Link unten funktioniert einmal und 24 Stunden lang. Das Öffnen allein ändert nichts; erst der Klick auf die Schaltfläche auf der Seite.',
  'mail.change.action': 'Diese Adresse verwenden',
  'mail.changeNotice.subject': 'Die Adresse Ihres Kontos bei {site} wird geändert',
  'mail.changeNotice.heading': 'Ihre Adresse wird geändert',
  'mail.changeNotice.what':
    'Am {at} wurde von {device} (Adresse {ip}) für Ihr Konto bei {site} beantragt, statt dieser Adresse {newAddress} zu verwenden. Die Änderung gilt, sobald die neue Adresse bestätigt ist.',
  'mail.changeNotice.action': 'Das war ich nicht: rückgängig machen und überall abmelden',
  'mail.changeNotice.footer':
    'Der Link funktioniert einmal und 7 Tage lang. Wenn Sie das waren, ist nichts zu tun.',
  'mail.link.subject': '{provider} mit Ihrem Konto bei {site} verknüpfen',
  'mail.link.heading': 'Mit {provider} anmelden',
  'mail.link.asked':
    'Jemand, der sich mit {provider} bei {site} anmeldet, möchte diese Anmeldung mit dem Konto dieser Adresse verknüpfen.',
  'mail.link.validity':
    'Der Link unten funktioniert einmal, {minutes} Minuten lang und nur in dem Browser, in dem diese Anmeldung begonnen wurde. Das Öffnen allein ändert nichts; erst der Klick auf die Schaltfläche auf der Seite.',
  'mail.link.action': '{provider} verknüpfen und anmelden',
  'mail.link.footer':
    'Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne sie wird nichts verknüpft.',

  'account.title': 'Ihr Konto',
  'account.nav': 'Konto',
  'account.signOut': 'Abmelden',
  'account.remove': 'Entfernen …',
  'account.name': 'Bezeichnung',
  'account.rename': 'Umbenennen',
  'account.noneYet': 'Noch keine.',
  'account.added': 'hinzugefügt am {added}',
  'account.addedLastUsed': 'hinzugefügt am {added}, zuletzt verwendet am {lastUsed}',
  'account.factorsTitle': 'Authenticator-Apps',
  'account.addAuthenticator': 'Authenticator-App hinzufügen',
  'account.removeAuthenticator':
    '„{name}“ entfernen? Mit ihren Codes können Sie sich dann nicht mehr anmelden.',
  'account.removeConfirm': 'Ja, {name} entfernen',
  'account.passkeysTitle': 'Ihre Passkeys',
  'account.passkeysNone':
    'Noch keine. Mit einem Passkey melden Sie sich ohne Passwort an, und er kann auf keiner anderen Website verwendet werden.',
  'account.passkeyAdded':
    '{synced, select, yes {synchronisiert} other {nur auf diesem Gerät}}, hinzugefügt am {added}',
  'account.passkeyAddedLastUsed':
    '{synced, select, yes {synchronisiert} other {nur auf diesem Gerät}}, hinzugefügt am {added}, zuletzt verwendet am {lastUsed}',
  'account.removePasskey': '„{name}“ entfernen? Sie können sich damit dann nicht mehr anmelden.',
  'account.addPasskey': 'Passkey hinzufügen',
  'account.recoveryTitle': 'Wiederherstellungscodes',
  'account.recoveryRemaining':
    '{count, plural, one {<remaining>{count}</remaining> unbenutzter Wiederherstellungscode.} other {<remaining>{count}</remaining> unbenutzte Wiederherstellungscodes.}}',
  'account.recoveryNew': 'Neue Wiederherstellungscodes erzeugen',
  'account.passwordTitle': 'Passwort',
  'account.currentPassword': 'Aktuelles Passwort',
  'account.newPassword': 'Neues Passwort',
  'account.newPasswordAgain': 'Neues Passwort wiederholen',
  'account.changePassword': 'Passwort ändern',
  'account.appsTitle': 'Anwendungen mit Zugriff',
  'account.appCan': '<strong>{app}</strong> darf:',
  'account.keepAccessAway': 'Zugriff behalten, während Sie abwesend sind',
  'account.none': 'Keine.',
  'account.revokeQuestion': 'Den Zugriff von {app} entfernen? Die Anwendung muss dann erneut fragen.',
  'account.revokeConfirm': 'Ja, Zugriff von {app} entfernen',
  'account.providersTitle': 'Anmeldedienste',
  'account.providersNone': 'Mit Ihrem Konto ist kein Anmeldedienst verknüpft.',
  'account.providerLastUsed': 'zuletzt verwendet am {at}',
  'account.unlink': 'Verknüpfung aufheben',
  'account.unlinkLabel': 'Verknüpfung mit {provider} aufheben',
  'account.link': '{provider} verknüpfen',
  'account.sessionsTitle': 'Aktive Sitzungen',
  'account.thisSession': '(diese Sitzung)',
  'account.sessionSignedIn': 'Angemeldet am {at}, zuletzt verwendet am {lastUsed}',
  'account.sessionSignedInFrom': 'Angemeldet am {at} von {ip}, zuletzt verwendet am {lastUsed}',
  'account.signOutSession': '{device} abmelden, angemeldet am {at}',
  'account.signOutOthers': 'Alle anderen Sitzungen abmelden',
  'account.emailTitle': 'E-Mail-Adresse',
  'account.emailVerified': 'Ihre Adresse ist bestätigt.',
  'account.emailNotVerified': 'Ihre Adresse ist noch nicht bestätigt.',
  'account.sendVerification': 'Bestätigungslink senden',
  'account.emailChangeHelp':
    'Ihr Konto behält diese Adresse, bis Sie den Link öffnen, den wir an die neue Adresse senden, und „Diese Adresse verwenden“ wählen; an diese Adresse geht ein Link, mit dem Sie die Änderung rückgängig machen können. Anwendungen, die Sie an Ihrer Adresse erkennen, zeigen danach, was zur neuen Adresse gehört: ein Bestellverlauf zum Beispiel zeigt die Bestellungen unter dieser Adresse nicht mehr.',
  'account.newEmail': 'Neue E-Mail-Adresse',
  'account.changeEmail': 'Adresse ändern',

  'securityEvents.title': 'Letzte Sicherheitsereignisse',
  'securityEvents.none': 'Noch keine Sicherheitsereignisse aufgezeichnet.',
  'securityEvents.advice':
    'Wenn Sie eines davon nicht wiedererkennen, ändern Sie Ihr Passwort und melden Sie Ihre anderen Sitzungen ab.',
  'securityEvents.from': '{at} von {ip}',
  'securityEvent.loginSucceeded': 'Angemeldet',
  'securityEvent.loginFailed': 'Anmeldung abgelehnt',
  'securityEvent.factorSucceeded': 'Zweiter Anmeldeschritt bestanden',
  'securityEvent.factorFailed': 'Zweiter Anmeldeschritt abgelehnt',
  'securityEvent.factorEnrolled': 'Zweiter Faktor hinzugefügt',
  'securityEvent.factorRemoved': 'Zweiter Faktor entfernt',
  'securityEvent.factorRenamed': 'Zweiter Faktor umbenannt',
  'securityEvent.recoveryCodesIssued': 'Neue Wiederherstellungscodes erzeugt',
  'securityEvent.passwordChanged': 'Passwort geändert',
  'securityEvent.passwordChangeFailed': 'Passwortänderung abgelehnt',
  'securityEvent.directoryPasswordChanged': 'Verzeichnispasswort geändert',
  'securityEvent.otherSessionsEnded': 'Andere Sitzungen abgemeldet',
  'securityEvent.appAccessRevoked': 'Zugriff einer Anwendung entfernt',
  'securityEvent.identityLinked': 'Anmeldedienst verknüpft',
  'securityEvent.identityUnlinked': 'Verknüpfung mit Anmeldedienst aufgehoben',
  'securityEvent.logout': 'Abgemeldet',
  'securityEvent.adminUserDisabled': 'Konto von einem Administrator deaktiviert',
  'securityEvent.adminUserEnabled': 'Konto von einem Administrator aktiviert',
  'securityEvent.adminPasswordReset': 'Passwort von einem Administrator zurückgesetzt',
  'securityEvent.adminMfaReset': 'Zweite Faktoren von einem Administrator entfernt',

  'passkeyEnrol.title': 'Passkey hinzufügen',
  'passkeyEnrol.name': 'Bezeichnung dieses Passkeys',
  'passkeyEnrol.explain':
    'Ihr Gerät (Telefon, Computer oder Sicherheitsschlüssel) erstellt einen Passkey für diese Website. Damit melden Sie sich dann an: Sie müssen kein Passwort eingeben, und er funktioniert nur hier.',
  'passkeyEnrol.submit': 'Passkey erstellen',
  'passkeyEnrol.backToAccount': 'Zurück zu Ihrem Konto',

  'recoveryCodes.title': 'Ihre Wiederherstellungscodes',
  'recoveryCodes.lead':
    'Bewahren Sie diese Codes an einem sicheren Ort auf. Jeder meldet Sie einmal an, falls Sie Ihre Authenticator-App verlieren. Sie werden nur jetzt angezeigt.',
  'recoveryCodes.copy': 'Kopieren',
  'recoveryCodes.download': 'Herunterladen',
  'recoveryCodes.copied': 'Kopiert. Fügen Sie sie an einem sicheren Ort ein.',
  'recoveryCodes.copyRefused': 'Kopieren wurde nicht erlaubt; verwenden Sie stattdessen „Herunterladen“.',
  'recoveryCodes.continue': 'Ich habe sie gespeichert, weiter',

  'accountNotice.appAdded': 'Authenticator-App hinzugefügt.',
  'accountNotice.appNotRenamed': 'Diese App konnte nicht umbenannt werden.',
  'accountNotice.renamed': 'Umbenannt.',
  'accountNotice.appNotFound': 'Diese App wurde nicht gefunden.',
  'accountNotice.appRemoved': 'Authenticator-App entfernt.',
  'accountNotice.passkeyAdded': 'Passkey hinzugefügt.',
  'accountNotice.passkeyNotRenamed': 'Dieser Passkey konnte nicht umbenannt werden.',
  'accountNotice.passkeyNotFound': 'Dieser Passkey wurde nicht gefunden.',
  'accountNotice.passkeyRemoved': 'Passkey entfernt.',
  'accountNotice.accessRemoved': 'Zugriff entfernt.',
  'accountNotice.otherSessionsEnded':
    '{count, plural, one {# andere Sitzung abgemeldet.} other {# andere Sitzungen abgemeldet.}}',
  'accountNotice.sessionNotFound': 'Diese Sitzung wurde nicht gefunden.',
  'accountNotice.sessionEnded': 'Diese Sitzung wurde abgemeldet.',
  'accountNotice.providerNotOffered': 'Dieser Anmeldedienst wird hier nicht angeboten.',
  'accountNotice.providerUnreachable':
    '{provider} ist gerade nicht erreichbar. Es wurde nichts verknüpft; versuchen Sie es später erneut.',
  'accountNotice.providerAlreadyLinked': '{provider} ist bereits verknüpft.',
  'accountNotice.providerLinked': '{provider} verknüpft.',
  'accountNotice.providerUnlinked': 'Verknüpfung mit dem Anmeldedienst aufgehoben.',
  'accountNotice.lastWayIn':
    'Dies ist Ihre einzige Möglichkeit, sich anzumelden: Die Verknüpfung kann nicht aufgehoben werden.',
  'accountNotice.providerNotLinked': 'Dieser Anmeldedienst ist nicht mit Ihrem Konto verknüpft.',
  'accountNotice.wrongCurrentPassword': 'Das aktuelle Passwort ist nicht richtig.',
  'accountNotice.passwordChanged':
    'Passwort geändert. {count, plural, one {# andere Sitzung wurde abgemeldet.} other {# andere Sitzungen wurden abgemeldet.}}',
  'accountNotice.verificationSent':
    'Wir haben einen Link an Ihre Adresse gesendet. Öffnen Sie ihn innerhalb von 24 Stunden, um die Adresse zu bestätigen.',
  'accountNotice.alreadyVerified': 'Ihre Adresse ist bereits bestätigt.',
  'accountNotice.noAddress': 'Ihr Konto hat keine Adresse.',
  'accountNotice.mailNotSent':
    'Die Nachricht konnte nicht gesendet werden. Bitte versuchen Sie es in einigen Minuten erneut.',
  'accountNotice.tooManyMails':
    'An diese Adresse oder von Ihrem Konto aus wurden zu viele Nachrichten gesendet. Bitte versuchen Sie es später erneut.',
  'accountNotice.notAnAddress': 'Das ist keine E-Mail-Adresse.',
  'accountNotice.changeSent':
    'Wir haben einen Link an die neue Adresse gesendet. Ihr Konto behält seine aktuelle Adresse, bis Sie diesen Link öffnen und „Diese Adresse verwenden“ wählen.',

  'emailLink.invalidTitle': 'Link nicht mehr gültig',
  'emailLink.invalid':
    'Dieser Link ist nicht mehr gültig: Er wurde bereits verwendet, ist abgelaufen, oder das Konto hat sich seitdem geändert.',
  'emailLink.verify.title': 'Adresse bestätigen',
  'emailLink.verify.lead': 'Bestätigen Sie, dass diese Adresse zu Ihrem Konto gehört.',
  'emailLink.verify.button': 'Meine Adresse bestätigen',
  'emailLink.verify.doneTitle': 'Adresse bestätigt',
  'emailLink.verify.done': 'Ihre Adresse ist bestätigt.',
  'emailLink.change.title': 'Diese Adresse verwenden',
  'emailLink.change.lead': 'Ab jetzt diese Adresse für Ihr Konto verwenden.',
  'emailLink.change.button': 'Diese Adresse verwenden',
  'emailLink.change.doneTitle': 'Adresse geändert',
  'emailLink.change.done': 'Ihr Konto verwendet ab jetzt die neue Adresse.',
  'emailLink.undo.title': 'Adressänderung rückgängig machen',
  'emailLink.undo.lead': 'Diese Adresse für Ihr Konto behalten und alle Sitzungen abmelden.',
  'emailLink.undo.button': 'Rückgängig machen und überall abmelden',
  'emailLink.undo.doneTitle': 'Änderung rückgängig gemacht',
  'emailLink.undo.done':
    'Ihr Konto behält diese Adresse und wurde überall abgemeldet. Ändern Sie Ihr Passwort, falls jemand anderes es kennt.',
  'wayOn.account': 'Zu Ihrem Konto',

  'link.title': 'Konto verknüpfen',
  'link.lead': 'Hier gibt es bereits ein Konto mit der Adresse <strong>{email}</strong>.',
  'link.prove':
    'Um sich ab jetzt mit {provider} daran anzumelden, weisen Sie nach, dass es Ihres ist: {ways, select, both {mit seinem Passwort oder mit einem Link, den wir an seine Adresse senden} password {mit seinem Passwort} other {mit einem Link, den wir an seine Adresse senden}}.',
  'link.password': 'Passwort des bestehenden Kontos',
  'link.submit': 'Verknüpfen und anmelden',
  'link.mailMe': 'Link per E-Mail senden',
  'link.unavailable':
    'Es kann hier nicht mit {provider} verknüpft werden: Melden Sie sich wie gewohnt an und verknüpfen Sie {provider} dann auf Ihrer Kontoseite.',
  'link.backToLogin': 'Zurück zur Anmeldung',
  'link.mailSentTitle': 'Prüfen Sie Ihre E-Mails',
  'link.mailSent': 'Wir haben einen Link an {address} gesendet.',
  'link.mailSentAdvice':
    'Öffnen Sie ihn in diesem Browser innerhalb von {minutes} Minuten, um sich mit {provider} an diesem Konto anzumelden. Bis dahin wird nichts verknüpft.',
  'link.mailedQuestion': 'Ab jetzt {provider} verwenden, um sich am Konto von {address} anzumelden?',

  'home.title': 'Autorisierungsserver',
  'home.lead':
    'Dies ist ein Autorisierungsserver für OAuth 2.0 und OpenID Connect. Anwendungen leiten Sie zur Anmeldung hierher; auf dieser Seite selbst gibt es nichts zu tun.',
  'home.issuer': 'Aussteller (Issuer): <code>{issuer}</code>',
  'home.account': 'Ihr Konto',
  'home.developers': 'Für Entwickler',
  'home.discovery': 'Discovery-Dokument',
  'home.jwks': 'Signaturschlüssel (JWKS)',
  'home.health': 'Betriebszustand',
};
