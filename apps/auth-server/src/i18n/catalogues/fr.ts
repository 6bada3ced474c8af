import type { Catalogue } from './en.js';

/** French, vouvoiement; "Se connecter" for signing in, "code de récupération" for recovery codes. */
export const fr: Catalogue = {
  'layout.languages': 'Langue',

  'login.title': 'Se connecter',
  'login.lead': 'pour continuer vers <strong>{client}</strong>',
  'login.username': 'Nom d’utilisateur',
  'login.password': 'Mot de passe',
  'login.submit': 'Se connecter',
  'login.forgotPassword': 'Mot de passe oublié ?',
  'login.withProvider': 'Se connecter avec {provider}',
  'login.withPasskey': 'Se connecter avec une clé d’accès',
  'login.withKerberos': 'Se connecter avec le compte de votre organisation (Kerberos)',
  'login.invalidCredentials': 'Nom d’utilisateur ou mot de passe incorrect.',
  'login.tooManyAttempts':
    'Trop de tentatives de connexion échouées. Veuillez réessayer dans {unit, select, seconds {{count, plural, one {# seconde} other {# secondes}}} other {{count, plural, one {# minute} other {# minutes}}}}.',
  'login.lastAttempt': 'Il vous reste 1 tentative avant un blocage de {minutes} minutes.',

  'otp.title': 'Validation en deux étapes',
  'otp.label': 'Code de votre application d’authentification',
  'otp.submit': 'Valider',
  'otp.usePasskey': 'Utiliser plutôt une clé d’accès',
  'otp.useRecoveryCode': 'Utiliser plutôt un code de récupération',
  'otp.invalidCode': 'Ce code n’est pas valide. Saisissez le code actuel de votre application.',

  'recovery.title': 'Utiliser un code de récupération',
  'recovery.label': 'Code de récupération',
  'recovery.format':
    'Dix lettres et chiffres de votre liste enregistrée, par exemple ABCDE-23456 (le tiret et la casse n’ont pas d’importance).',
  'recovery.submit': 'Valider',
  'recovery.useApp': 'Utiliser plutôt le code de votre application d’authentification',
  'recovery.invalidCode': 'Ce code de récupération n’est pas valide ou a déjà été utilisé.',
  'recovery.usedTitle': 'Code de récupération accepté',
  'recovery.usedUp':
    'Ce code de récupération est désormais utilisé. Il vous reste <left>{remaining, plural, one {# code de récupération} other {# codes de récupération}}</left>.',
  'recovery.getNewSetSoon': 'Procurez-vous bientôt une nouvelle série sur {accountLink}.',
  'recovery.getNewSetAnyTime': 'Vous pouvez obtenir une nouvelle série à tout moment sur {accountLink}.',
  'recovery.accountPage': 'la page de votre compte',
  'recovery.continue': 'Continuer',

  'consent.title': 'Autoriser l’accès à {client} ?',
  'consent.lead': '<strong>{client}</strong>{fromHost} souhaite :',
  'consent.fromHost': '(de {host})',
  'consent.signedInAs': 'Connecté en tant que <strong>{user}</strong>.',
  'consent.deny': 'Refuser',
  'consent.allow': 'Autoriser',
  'consent.withdraw': 'Vous pouvez retirer cet accès à tout moment sur {accountLink}.',
  'consent.accountPage': 'la page de votre compte',
  'scope.openid': 'Confirmer votre identité lors de la connexion',
  'scope.offline_access': 'Conserver l’accès lorsque vous n’utilisez pas l’application',
  'scope.claims': 'Voir {claims}',
  'scope.read': 'Consulter vos données « {resource} »',
  'scope.write': 'Créer et modifier vos données « {resource} »',
  'scope.other': 'Utiliser l’autorisation « {scope} »',
  'claim.name': 'votre nom',
  'claim.email': 'votre adresse e-mail',
  'claim.groups': 'les groupes dont vous faites partie',

  'error.code': 'Code d’erreur : <code>{errorCode}</code>',
  'error.defaultAdvice': 'Revenez à l’application d’où vous veniez et réessayez.',
  'error.startPage': 'Aller à la page d’accueil',
  'error.accountPage': 'Aller à votre compte',
  'error.alreadyCompleted.title': 'Cette demande de connexion est déjà terminée',
  'error.alreadyCompleted.message': 'Revenez à l’application ; elle vous a peut-être déjà connecté.',
  'error.expired.title': 'Cette demande de connexion a expiré',
  'error.expired.message':
    'La connexion a pris trop de temps ou était déjà terminée. Recommencez depuis l’application.',
  'error.expired.messageNoApp':
    'La connexion a pris trop de temps ou était déjà terminée. Recommencez depuis l’application d’où vous veniez.',
  'error.otherBrowser.title': 'Connexion commencée dans un autre navigateur',
  'error.otherBrowser.message': 'Veuillez recommencer la connexion depuis l’application, dans ce navigateur.',
  'error.invalidRequest.title': 'Cette demande de connexion n’est pas valide',
  'error.invalidRequest.message': 'L’application a envoyé une demande de connexion non valide.',
  'error.formExpired.title': 'Ce formulaire a expiré',
  'error.formExpired.message':
    'Le formulaire n’a pas pu être vérifié : il est resté ouvert trop longtemps, ou provient d’un autre navigateur.',
  'error.formExpired.advice': 'Revenez en arrière, rechargez la page et renvoyez le formulaire.',

  'logout.title': 'Se déconnecter ?',
  'logout.question': 'Voulez-vous vous déconnecter ?',
  'logout.clientAsks': '<strong>{client}</strong> vous demande de vous déconnecter.',
  'logout.explanation':
    'La déconnexion met fin à votre session ici et dans les applications auxquelles vous vous êtes connecté avec elle. Si vous n’avez pas demandé à vous déconnecter, fermez cette page.',
  'logout.submit': 'Se déconnecter',
  'signedOut.title': 'Vous êtes déconnecté',
  'signedOut.done': 'Vous avez été déconnecté.',
  'signedOut.closeOrStart':
    'Vous avez été déconnecté. Vous pouvez fermer cette fenêtre, ou continuer depuis la page d’accueil.',
  'signedOut.continue': 'Continuer',
  'signedOut.frameTitle': 'Déconnexion d’une application',

  'device.title': 'Connecter un appareil',
  'device.lead': 'Saisissez le code affiché sur votre appareil.',
  'device.code': 'Code',
  'device.submit': 'Continuer',
  'device.warning':
    'Ne continuez que si vous venez vous-même de commencer à vous connecter sur un appareil qui vous appartient.',
  'device.approvedTitle': 'Appareil connecté',
  'device.approved': '<strong>{client}</strong> est maintenant connecté sur votre appareil.',
  'device.approvedAdvice': 'Vous pouvez fermer cette fenêtre et revenir à votre appareil.',
  'device.deniedTitle': 'Accès refusé',
  'device.denied': '<strong>{client}</strong> n’a pas obtenu l’accès.',
  'device.deniedAdvice': 'Vous pouvez fermer cette fenêtre. L’appareil indiquera que l’accès a été refusé.',
  'device.consentNotice':
    'N’autorisez ceci que si vous venez vous-même de commencer à vous connecter sur votre propre appareil. Une personne qui vous a envoyé un code ne peut pas l’utiliser sans votre accord.',
  'device.codeProblem.title': 'Ce code n’est plus utilisable',
  'device.codeInvalid': 'Ce code n’est pas valide. Vérifiez le code affiché sur votre appareil et réessayez.',
  'device.codeExpired': 'Ce code a expiré. Recommencez sur votre appareil pour obtenir un nouveau code.',
  'device.codeUsed':
    'Ce code a déjà été utilisé. Recommencez sur votre appareil si vous devez encore vous connecter.',
  'device.nothingGrantable.title': 'Cet appareil ne peut pas obtenir l’accès',
  'device.nothingGrantable.message':
    'Votre compte ne peut accorder aucune des autorisations demandées par l’appareil.',

  'continueToProvider.title': 'Association de {provider}',
  'continueToProvider.lead':
    'Nous vous conduisons vers {provider} pour vous y connecter. À votre retour, il sera associé à votre compte.',
  'continueToProvider.continue': 'Continuer vers {provider}',
  'continueToProvider.back': 'Retour à votre compte',

  'passkey.use': 'Utiliser votre clé d’accès',
  'passkey.failed':
    'Cette clé d’accès n’a pas pu être vérifiée. Veuillez réessayer, ou choisir un autre moyen.',
  'passkey.usePassword': 'Se connecter plutôt avec votre mot de passe',
  'passkey.useApp': 'Saisir plutôt un code de votre application d’authentification',

  'enrol.title': 'Configurer une application d’authentification',
  'enrol.scan': 'Scannez ce code avec une application d’authentification :',
  'enrol.qrAlt': 'QR code de la clé secrète pour l’application d’authentification',
  'enrol.key': 'Ou saisissez cette clé : <key></key>',
  'enrol.enterCode': 'Saisissez le code à 6 chiffres affiché par l’application.',
  'enrol.submit': 'Confirmer',
  'enrol.leadPasskey':
    '{client} demande une clé d’accès à la connexion. Configurez une clé d’accès pour continuer.',
  'enrol.leadApp':
    '{client} exige une deuxième étape à la connexion. Configurez une application d’authentification pour continuer.',
  'enrol.leadSecondStep': '{client} exige une deuxième étape lors de la connexion.',
  'enrol.setUpAppInstead': 'Configurer plutôt une application d’authentification',
  'enrol.setUpPasskey': 'Configurer une clé d’accès',
  'enrol.setUpPasskeyInstead': 'Configurer plutôt une clé d’accès',

  'forgot.title': 'Mot de passe oublié ?',
  'forgot.lead':
    'Saisissez l’adresse e-mail de votre compte. Si elle appartient à un compte, nous y envoyons un lien pour choisir un nouveau mot de passe.',
  'forgot.email': 'Adresse e-mail',
  'forgot.submit': 'Envoyer le lien',
  'forgot.sentTitle': 'Consultez votre messagerie',
  'forgot.sent':
    'Si un compte utilise cette adresse, un lien pour choisir un nouveau mot de passe vient de lui être envoyé.',
  'forgot.sentAdvice':
    'Le lien fonctionne une seule fois, pendant {minutes} minutes. Rien reçu ? Vérifiez le dossier des indésirables ou redemandez dans quelques minutes.',
  'forgot.formExpired': 'Le formulaire a expiré. Veuillez saisir à nouveau votre adresse.',
  'forgot.limitedTitle': 'Trop de tentatives',
  'forgot.limited':
    'Trop de demandes de lien de réinitialisation. Patientez quelques minutes, puis réessayez.',
  'reset.mismatch': 'Le nouveau mot de passe et sa confirmation ne correspondent pas.',
  'reset.title': 'Choisir un nouveau mot de passe',
  'reset.lead':
    'Choisissez un nouveau mot de passe : au moins {length} caractères, et pas un mot de passe courant.',
  'reset.newPassword': 'Nouveau mot de passe',
  'reset.confirmPassword': 'Confirmer le nouveau mot de passe',
  'reset.submit': 'Enregistrer le nouveau mot de passe',
  'reset.doneTitle': 'Mot de passe modifié',
  'reset.done': 'Votre mot de passe a été modifié. Toutes les sessions de votre compte ont été fermées.',
  'reset.doneAdvice':
    'Revenez à l’application et connectez-vous avec le nouveau mot de passe, ou connectez-vous ici à votre compte.',
  'reset.signInToAccount': 'Se connecter à votre compte',
  'reset.invalidTitle': 'Lien expiré',
  'reset.invalid':
    'Ce lien n’est plus valide : il a déjà servi, il a expiré, un lien plus récent a été envoyé, ou le mot de passe a changé depuis.',
  'reset.askAgain': 'Demander un nouveau lien',

  'mail.reset.subject': 'Réinitialiser votre mot de passe pour {site}',
  'mail.reset.heading': 'Réinitialiser votre mot de passe',
  'mail.reset.asked':
    'Quelqu’un a demandé la réinitialisation du mot de passe du compte associé à cette adresse sur {site}.',
  'mail.reset.validity':
    'Le lien ci-dessous fonctionne une seule fois, pendant {minutes} minutes. L’ouvrir ne change rien tant que vous n’avez pas choisi un nouveau mot de passe sur la page.',
  'mail.reset.action': 'Choisir un nouveau mot de passe',
  'mail.reset.footer':
    'Si vous n’êtes pas à l’origine de cette demande, ignorez ce message : votre mot de passe reste inchangé.',
  'mail.notice.happened': '{what} sur {site} le {at}, depuis {device} (adresse {ip}).',
  'mail.notice.footer':
    'Si ce n’était pas vous, changez immédiatement votre mot de passe sur la page de votre compte {site} (ou avec « Mot de passe oublié ? » sur sa page de connexion), vérifiez vos méthodes de connexion et prévenez votre administrateur.',
  'mail.notice.subjectAt': '{subject} sur {site}',
  'mail.factorAdded.subject': 'Une méthode de connexion a été ajoutée à votre compte',
  'mail.factorAdded.heading': 'Méthode de connexion ajoutée',
  'mail.factorAdded.what':
    'Une clé d’accès ou une application d’authentification a été ajoutée à votre compte',
  'mail.factorRemoved.subject': 'Une méthode de connexion a été retirée de votre compte',
  'mail.factorRemoved.heading': 'Méthode de connexion retirée',
  'mail.factorRemoved.what':
    'Une clé d’accès ou une application d’authentification a été retirée de votre compte',
  'mail.recoveryCodeUsed.subject': 'Un code de récupération de votre compte a été utilisé',
  'mail.recoveryCodeUsed.heading': 'Code de récupération utilisé',
  'mail.recoveryCodeUsed.what': 'L’un de vos codes de récupération a servi à se connecter à votre compte',
  'mail.identityLinked.subject': 'Un service de connexion a été associé à votre compte',
  'mail.identityLinked.heading': 'Service de connexion associé',
  'mail.identityLinked.what': 'La connexion avec {service} a été associée à votre compte',
  'mail.identityUnlinked.subject': 'Un service de connexion a été dissocié de votre compte',
  'mail.identityUnlinked.heading': 'Service de connexion dissocié',
  'mail.identityUnlinked.what': 'La connexion avec {service} a été dissociée de votre compte',
  'mail.anotherService': 'un autre service',
  'mail.passwordChanged.subject': 'Votre mot de passe pour {site} a été modifié',
  'mail.passwordChanged.heading': 'Votre mot de passe a été modifié',
  'mail.passwordChanged.what':
    'Le mot de passe de votre compte sur {site} a été modifié le {at} depuis {device} (adresse {ip}).',
  'mail.passwordChanged.ended':
    'Toutes les sessions et connexions d’applications du compte ont été fermées ; reconnectez-vous avec le nouveau mot de passe.',
  'mail.passwordChanged.footer':
    'Si ce n’était pas vous, réinitialisez immédiatement votre mot de passe avec « Mot de passe oublié ? » sur la page de connexion de {site}, et prévenez votre administrateur.',
  'mail.verify.subject': 'Confirmez votre adresse pour {site}',
  'mail.verify.heading': 'Confirmez votre adresse',
  'mail.verify.asked': 'Quelqu’un a demandé à {site} de confirmer que cette adresse appartient à son compte.',
  'mail.verify.validity':
    'Le lien ci-dessous fonctionne une seule fois, pendant {hours} heures. L’ouvrir ne change rien tant que vous n’appuyez pas sur le bouton de la page.',
  'mail.verify.action': 'Confirmer cette adresse',
  'mail.ignore': 'Si vous n’êtes pas à l’origine de cette demande, ignorez ce message.',
  'mail.change.subject': 'Confirmez votre nouvelle adresse pour {site}',
  'mail.change.heading': 'Confirmez votre nouvelle adresse',
  'mail.change.asked':
    'Quelqu’un a demandé à {site} d’utiliser cette adresse pour son compte. Tant qu’elle n’est pas confirmée, le compte garde son ancienne adresse.',
  'mail.change.validity':
    'Le lien ci-dessous fonctionne une seule fois, pendant 24 heures. L’ouvrir ne change rien tant que vous n’appuyez pas sur le bouton de la page.',
  'mail.change.action': 'Utiliser cette adresse',
  'mail.changeNotice.subject': 'L’adresse de votre compte sur {site} est en cours de modification',
  'mail.changeNotice.heading': 'Votre adresse est en cours de modification',
  'mail.changeNotice.what':
    'Le {at}, depuis {device} (adresse {ip}), votre compte sur {site} a demandé à utiliser {newAddress} à la place de cette adresse. Le changement prend effet dès que la nouvelle adresse est confirmée.',
  'mail.changeNotice.action': 'Ce n’était pas moi : annuler et me déconnecter partout',
  'mail.changeNotice.footer':
    'Le lien fonctionne une seule fois, pendant 7 jours. Si c’était vous, vous n’avez rien à faire.',
  'mail.link.subject': 'Associer {provider} à votre compte sur {site}',
  'mail.link.heading': 'Se connecter avec {provider}',
  'mail.link.asked':
    'Quelqu’un qui se connecte à {site} avec {provider} a demandé à associer cette connexion au compte de cette adresse.',
  'mail.link.validity':
    'Le lien ci-dessous fonctionne une seule fois, pendant {minutes} minutes, et uniquement dans le navigateur où cette connexion a commencé. L’ouvrir ne change rien tant que vous n’appuyez pas sur le bouton de la page.',
  'mail.link.action': 'Associer {provider} et se connecter',
  'mail.link.footer':
    'Si vous n’êtes pas à l’origine de cette demande, ignorez ce message : rien n’est associé sans lui.',

  'account.title': 'Votre compte',
  'account.nav': 'Compte',
  'account.signOut': 'Se déconnecter',
  'account.remove': 'Supprimer…',
  'account.name': 'Nom',
  'account.rename': 'Renommer',
  'account.noneYet': 'Aucune pour l’instant.',
  'account.added': 'ajoutée le {added}',
  'account.addedLastUsed': 'ajoutée le {added}, dernière utilisation le {lastUsed}',
  'account.factorsTitle': 'Applications d’authentification',
  'account.addAuthenticator': 'Ajouter une application d’authentification',
  'account.removeAuthenticator': 'Supprimer « {name} » ? Ses codes ne permettront plus de vous connecter.',
  'account.removeConfirm': 'Oui, supprimer {name}',
  'account.passkeysTitle': 'Clés d’accès',
  'account.passkeysNone':
    'Aucune pour l’instant. Une clé d’accès vous connecte sans mot de passe et ne peut pas servir sur un autre site.',
  'account.passkeyAdded':
    '{synced, select, yes {synchronisée} other {sur cet appareil uniquement}}, ajoutée le {added}',
  'account.passkeyAddedLastUsed':
    '{synced, select, yes {synchronisée} other {sur cet appareil uniquement}}, ajoutée le {added}, dernière utilisation le {lastUsed}',
  'account.removePasskey': 'Supprimer « {name} » ? Elle ne permettra plus de vous connecter.',
  'account.addPasskey': 'Ajouter une clé d’accès',
  'account.recoveryTitle': 'Codes de récupération',
  'account.recoveryRemaining':
    '{count, plural, one {<remaining>{count}</remaining> code de récupération inutilisé.} other {<remaining>{count}</remaining> codes de récupération inutilisés.}}',
  'account.recoveryNew': 'Obtenir de nouveaux codes de récupération',
  'account.passwordTitle': 'Mot de passe',
  'account.currentPassword': 'Mot de passe actuel',
  'account.newPassword': 'Nouveau mot de passe',
  'account.newPasswordAgain': 'Confirmer le nouveau mot de passe',
  'account.changePassword': 'Changer le mot de passe',
  'account.appsTitle': 'Applications ayant accès',
  'account.appCan': '<strong>{app}</strong> peut :',
  'account.keepAccessAway': 'Garder l’accès en votre absence',
  'account.none': 'Aucune.',
  'account.revokeQuestion': 'Retirer l’accès de {app} ? Elle devra vous le redemander.',
  'account.revokeConfirm': 'Oui, retirer l’accès de {app}',
  'account.providersTitle': 'Services de connexion',
  'account.providersNone': 'Aucun service de connexion n’est lié à votre compte.',
  'account.providerLastUsed': 'dernière utilisation le {at}',
  'account.unlink': 'Délier',
  'account.unlinkLabel': 'Délier {provider}',
  'account.link': 'Lier {provider}',
  'account.sessionsTitle': 'Sessions actives',
  'account.thisSession': '(cette session)',
  'account.sessionSignedIn': 'Connexion le {at}, dernière utilisation le {lastUsed}',
  'account.sessionSignedInFrom': 'Connexion le {at} depuis {ip}, dernière utilisation le {lastUsed}',
  'account.signOutSession': 'Déconnecter {device}, connecté le {at}',
  'account.signOutOthers': 'Déconnecter toutes les autres sessions',
  'account.emailTitle': 'Adresse e-mail',
  'account.emailVerified': 'Votre adresse est vérifiée.',
  'account.emailNotVerified': 'Votre adresse n’est pas encore vérifiée.',
  'account.sendVerification': 'Envoyer un lien de vérification',
  'account.emailChangeHelp':
    'Votre compte garde cette adresse jusqu’à ce que vous ouvriez le lien que nous envoyons à la nouvelle et choisissiez « Utiliser cette adresse » ; cette adresse-ci reçoit un lien pour annuler le changement. Les applications qui vous reconnaissent à votre adresse montrent ensuite ce qui appartient à la nouvelle : un historique de commandes, par exemple, ne montre plus les commandes passées sous cette adresse.',
  'account.newEmail': 'Nouvelle adresse e-mail',
  'account.changeEmail': 'Changer l’adresse',

  'securityEvents.title': 'Événements de sécurité récents',
  'securityEvents.none': 'Aucun événement de sécurité enregistré pour l’instant.',
  'securityEvents.advice':
    'Si vous n’en reconnaissez pas un, changez votre mot de passe et déconnectez vos autres sessions.',
  'securityEvents.from': '{at} depuis {ip}',
  'securityEvent.loginSucceeded': 'Connexion',
  'securityEvent.loginFailed': 'Connexion refusée',
  'securityEvent.factorSucceeded': 'Deuxième étape de connexion réussie',
  'securityEvent.factorFailed': 'Deuxième étape de connexion refusée',
  'securityEvent.factorEnrolled': 'Second facteur ajouté',
  'securityEvent.factorRemoved': 'Second facteur supprimé',
  'securityEvent.factorRenamed': 'Second facteur renommé',
  'securityEvent.recoveryCodesIssued': 'Nouveaux codes de récupération émis',
  'securityEvent.passwordChanged': 'Mot de passe changé',
  'securityEvent.passwordChangeFailed': 'Changement de mot de passe refusé',
  'securityEvent.directoryPasswordChanged': 'Mot de passe de l’annuaire changé',
  'securityEvent.otherSessionsEnded': 'Autres sessions déconnectées',
  'securityEvent.appAccessRevoked': 'Accès d’une application retiré',
  'securityEvent.identityLinked': 'Service de connexion lié',
  'securityEvent.identityUnlinked': 'Service de connexion délié',
  'securityEvent.logout': 'Déconnexion',
  'securityEvent.adminUserDisabled': 'Compte désactivé par un administrateur',
  'securityEvent.adminUserEnabled': 'Compte réactivé par un administrateur',
  'securityEvent.adminPasswordReset': 'Mot de passe réinitialisé par un administrateur',
  'securityEvent.adminMfaReset': 'Seconds facteurs supprimés par un administrateur',

  'passkeyEnrol.title': 'Ajouter une clé d’accès',
  'passkeyEnrol.name': 'Nom de cette clé d’accès',
  'passkeyEnrol.explain':
    'Votre appareil (téléphone, ordinateur ou clé de sécurité) crée une clé d’accès pour ce site. Vous vous connectez ensuite avec elle : aucun mot de passe à saisir, et elle ne fonctionne qu’ici.',
  'passkeyEnrol.submit': 'Créer la clé d’accès',
  'passkeyEnrol.backToAccount': 'Retour à votre compte',

  'recoveryCodes.title': 'Vos codes de récupération',
  'recoveryCodes.lead':
    'Conservez ces codes en lieu sûr. Chacun vous connecte une fois si vous perdez votre application d’authentification. Ils ne sont affichés que maintenant.',
  'recoveryCodes.copy': 'Copier',
  'recoveryCodes.download': 'Télécharger',
  'recoveryCodes.copied': 'Copiés. Collez-les en lieu sûr.',
  'recoveryCodes.copyRefused': 'La copie n’a pas été autorisée ; utilisez plutôt « Télécharger ».',
  'recoveryCodes.continue': 'Je les ai enregistrés, continuer',

  'accountNotice.appAdded': 'Application d’authentification ajoutée.',
  'accountNotice.appNotRenamed': 'Cette application n’a pas pu être renommée.',
  'accountNotice.renamed': 'Renommée.',
  'accountNotice.appNotFound': 'Cette application est introuvable.',
  'accountNotice.appRemoved': 'Application d’authentification supprimée.',
  'accountNotice.passkeyAdded': 'Clé d’accès ajoutée.',
  'accountNotice.passkeyNotRenamed': 'Cette clé d’accès n’a pas pu être renommée.',
  'accountNotice.passkeyNotFound': 'Cette clé d’accès est introuvable.',
  'accountNotice.passkeyRemoved': 'Clé d’accès supprimée.',
  'accountNotice.accessRemoved': 'Accès retiré.',
  'accountNotice.otherSessionsEnded':
    '{count, plural, one {# autre session déconnectée.} other {# autres sessions déconnectées.}}',
  'accountNotice.sessionNotFound': 'Cette session est introuvable.',
  'accountNotice.sessionEnded': 'Cette session a été déconnectée.',
  'accountNotice.providerNotOffered': 'Ce service de connexion n’est pas proposé ici.',
  'accountNotice.providerUnreachable':
    '{provider} est injoignable pour le moment. Rien n’a été lié ; réessayez plus tard.',
  'accountNotice.providerAlreadyLinked': '{provider} est déjà lié.',
  'accountNotice.providerLinked': '{provider} lié.',
  'accountNotice.providerUnlinked': 'Service de connexion délié.',
  'accountNotice.lastWayIn': 'C’est votre seul moyen de connexion : il ne peut pas être délié.',
  'accountNotice.providerNotLinked': 'Ce service de connexion n’est pas lié à votre compte.',
  'accountNotice.wrongCurrentPassword': 'Le mot de passe actuel n’est pas correct.',
  'accountNotice.passwordChanged':
    'Mot de passe changé. {count, plural, one {# autre session a été déconnectée.} other {# autres sessions ont été déconnectées.}}',
  'accountNotice.verificationSent':
    'Nous avons envoyé un lien à votre adresse. Ouvrez-le dans les 24 heures pour confirmer l’adresse.',
  'accountNotice.alreadyVerified': 'Votre adresse est déjà vérifiée.',
  'accountNotice.noAddress': 'Votre compte n’a pas d’adresse.',
  'accountNotice.mailNotSent': 'Nous n’avons pas pu envoyer le message. Réessayez dans quelques minutes.',
  'accountNotice.tooManyMails':
    'Trop de messages ont été envoyés à cette adresse ou depuis votre compte. Réessayez plus tard.',
  'accountNotice.notAnAddress': 'Ce n’est pas une adresse e-mail.',
  'accountNotice.changeSent':
    'Nous avons envoyé un lien à la nouvelle adresse. Votre compte garde son adresse actuelle jusqu’à ce que vous ouvriez ce lien et choisissiez « Utiliser cette adresse ».',

  'emailLink.invalidTitle': 'Ce lien n’est plus valide',
  'emailLink.invalid':
    'Ce lien n’est plus valide : il a déjà servi, il a expiré, ou le compte a changé depuis.',
  'emailLink.verify.title': 'Confirmer votre adresse',
  'emailLink.verify.lead': 'Confirmez que cette adresse appartient à votre compte.',
  'emailLink.verify.button': 'Confirmer mon adresse',
  'emailLink.verify.doneTitle': 'Adresse vérifiée',
  'emailLink.verify.done': 'Votre adresse est vérifiée.',
  'emailLink.change.title': 'Utiliser cette adresse',
  'emailLink.change.lead': 'Utiliser désormais cette adresse pour votre compte.',
  'emailLink.change.button': 'Utiliser cette adresse',
  'emailLink.change.doneTitle': 'Adresse changée',
  'emailLink.change.done': 'Votre compte utilise désormais la nouvelle adresse.',
  'emailLink.undo.title': 'Annuler le changement d’adresse',
  'emailLink.undo.lead': 'Garder cette adresse pour votre compte et déconnecter toutes les sessions.',
  'emailLink.undo.button': 'Annuler et se déconnecter partout',
  'emailLink.undo.doneTitle': 'Changement annulé',
  'emailLink.undo.done':
    'Votre compte garde cette adresse et a été déconnecté partout. Changez votre mot de passe si quelqu’un d’autre le connaît.',
  'wayOn.account': 'Aller à votre compte',

  'link.title': 'Lier votre compte',
  'link.lead': 'Un compte avec l’adresse <strong>{email}</strong> existe déjà ici.',
  'link.prove':
    'Pour vous y connecter désormais avec {provider}, prouvez qu’il est à vous {ways, select, both {avec son mot de passe, ou avec un lien que nous envoyons à son adresse} password {avec son mot de passe} other {avec un lien que nous envoyons à son adresse}}.',
  'link.password': 'Mot de passe du compte existant',
  'link.submit': 'Lier et se connecter',
  'link.mailMe': 'M’envoyer un lien par e-mail',
  'link.unavailable':
    'Il ne peut pas être lié à {provider} ici : connectez-vous comme d’habitude, puis liez {provider} depuis la page de votre compte.',
  'link.backToLogin': 'Retour à la connexion',
  'link.mailSentTitle': 'Consultez vos e-mails',
  'link.mailSent': 'Nous avons envoyé un lien à {address}.',
  'link.mailSentAdvice':
    'Ouvrez-le dans ce navigateur dans les {minutes} minutes pour vous connecter à ce compte avec {provider}. D’ici là, rien n’est lié.',
  'link.mailedQuestion': 'Utiliser désormais {provider} pour vous connecter au compte de {address} ?',

  'home.title': 'Serveur d’autorisation',
  'home.lead':
    'Ceci est un serveur d’autorisation OAuth 2.0 et OpenID Connect. Les applications vous envoient ici pour vous connecter ; il n’y a rien à faire sur cette page elle-même.',
  'home.issuer': 'Émetteur : <code>{issuer}</code>',
  'home.account': 'Votre compte',
  'home.developers': 'Pour les développeurs',
  'home.discovery': 'Document de découverte',
  'home.jwks': 'Clés de signature (JWKS)',
  'home.health': 'État de santé',
};
