"""Access control: roles and their permissions (:mod:`.roles`), accounts (:mod:`.users`) and signing in
with a rate limit and expiring sessions (:mod:`.sessions`). See docs/security.md."""
from muttlab.access.roles import ANONYMOUS, Action, Identity, Role, allowed, can, local_operator, require

__all__ = ["ANONYMOUS", "Action", "Identity", "Role", "allowed", "can", "local_operator", "require"]
