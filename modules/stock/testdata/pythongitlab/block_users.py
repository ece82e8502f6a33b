"""An administrator's script blocks and unblocks a user; a repeated call
changes nothing and says so."""
from check import client, eq

gl = client()
user = gl.users.create({"email": "blocky@example.com", "username": "blocky", "name": "Blocky",
                        "password": "a-long-password-1", "skip_confirmation": True})
eq(user.block(), True, "block()")
eq(gl.users.get(user.id).state, "blocked", "state after block()")
eq(user.block(), False, "block() of a blocked user")
eq(user.unblock(), True, "unblock()")
eq(user.unblock(), False, "unblock() of an active user")
eq(gl.users.get(user.id).state, "active", "state after unblock()")
