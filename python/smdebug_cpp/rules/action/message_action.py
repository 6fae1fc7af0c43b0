"""MessageAction: an SNS text message ("sms") or e-mail ("email") when a rule fires, as
smdebug.rules.action.message_action.MessageAction."""
import logging
import os

from ._aws import forward_log, query_answer

logger = logging.getLogger("smdebug_cpp")


class MessageAction:
    """At construction: creates (or finds) the SNS topic "SMDebugRules" and subscribes the endpoint to
    it unless a subscription exists (``_last_subscription_response``: Subscribe's answer as a dict,
    or a sentence when the subscription existed; None when a call failed). ``invoke(message)``
    publishes "SMDebugRule:<rule> fired. <message>" (``_last_send_mesg_response``). Every AWS
    failure is logged and swallowed, as in the reference."""

    def __init__(self, rule_name, message_type, message_endpoint):
        from ... import _core

        self._topic_name = "SMDebugRules"
        if message_type == "sms" or message_type == "email":
            self._protocol = message_type
        else:
            self._protocol = None
            logger.info(f"Unsupported message type:{message_type} in MessageAction. Returning")
            return
        self._message_endpoint = message_endpoint
        self._last_send_mesg_response = None
        self._last_subscription_response = None
        region = os.getenv("AWS_REGION", "us-east-1")
        self._sns = _core.SnsMessageAction(rule_name, self._protocol, str(message_endpoint))
        forward_log(self._sns)
        self._topic_arn = self._sns.topic_arn
        if self._sns.subscription_existed:
            self._last_subscription_response = (
                f"Subscription exists for topic:{self._topic_arn}, protocol:{self._protocol}, endpoint:{self._message_endpoint}")
        else:
            self._last_subscription_response = query_answer(self._sns.subscription_response)
        logger.info(f"Registering messageAction with protocol:{self._protocol} endpoint:{self._message_endpoint} and "
                    f"topic_arn:{self._topic_arn} region:{region}")
        self._rule_name = rule_name

    def _send_message(self, message):
        response = query_answer(self._sns.publish(message))
        forward_log(self._sns)
        logger.info(f"Response of send message:{response}")
        self._last_send_mesg_response = response
        return response

    def invoke(self, message):
        if self._protocol is None:
            return None
        return self._send_message(message)
