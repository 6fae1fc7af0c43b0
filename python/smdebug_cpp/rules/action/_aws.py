"""Helpers of the AWS actions: the C++ clients' log lines into Python logging, and AWS query-API XML
answers as the dicts boto3 returns (the result's fields plus ResponseMetadata)."""
import logging
import xml.etree.ElementTree as ElementTree

logger = logging.getLogger("smdebug_cpp")


def forward_log(action):
    for line in action.take_log():
        logger.info(line)


def _local(tag):
    return tag.rsplit("}", 1)[-1]


def query_answer(body):
    """<XResponse><XResult><Field>v</Field>...</XResult><ResponseMetadata><RequestId>..</RequestId>
    </ResponseMetadata></XResponse> -> {"Field": "v", ..., "ResponseMetadata": {"RequestId": ..,
    "HTTPStatusCode": 200}}; None for no answer."""
    if body is None:
        return None
    answer = {}
    metadata = {"HTTPStatusCode": 200}
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return {"ResponseMetadata": metadata}
    for part in root:
        name = _local(part.tag)
        if name == "ResponseMetadata":
            for field in part:
                metadata[_local(field.tag)] = (field.text or "").strip()
        elif name.endswith("Result"):
            for field in part:
                if len(field) == 0:
                    answer[_local(field.tag)] = (field.text or "").strip()
    answer["ResponseMetadata"] = metadata
    return answer
